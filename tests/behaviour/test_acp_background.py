"""Over ACP, a background process is a tool call whose content updates: the `run_command` call that started it stays
in progress, shows its output as it arrives (after the turn has answered), and ends completed with its exit code."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, call, drive, write_script

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def _texts(client: Recorder, call_id: str) -> list[tuple[str, str]]:
    return [(u.status or "", "".join(c.content.text for c in u.content or [] if hasattr(c, "content")))
            for u in client.tool_updates(call_id) if u.session_update == "tool_call_update"]


def test_a_background_process_is_a_tool_call_whose_content_follows_its_output(tmp_path: Path,
                                                                                isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    command = "echo tick-1; sleep 2.5; echo tick-2; sleep 0.5; echo tick-3"
    model = write_script(tmp_path / "script.json", [
        {"tool_calls": [call("run_command", "bg1", command=command, background=True)]}, {"text": "started"}])

    async def body(conn: Any, client: Recorder, process: Any) -> list[tuple[str, str]]:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("start it")])
        assert done.stop_reason == "end_turn"
        answered = _texts(client, "bg1")
        for _ in range(100):  # the turn has answered; the process goes on
            if any(status == "completed" for status, _ in _texts(client, "bg1")):
                break
            await asyncio.sleep(0.1)
        assert all(status == "in_progress" for status, _ in answered), answered
        return _texts(client, "bg1")

    seen = drive(ws, model, body)
    assert any(status == "in_progress" and "tick-1" in text and "tick-2" not in text for status, text in seen), seen
    assert any(status == "in_progress" and "tick-2" in text for status, text in seen), seen  # as it arrives
    assert seen[-1][0] == "completed" and "tick-3" in seen[-1][1] and "exit code 0" in seen[-1][1], seen

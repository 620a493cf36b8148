"""Over a real stdio ACP connection: the model's plan reaches the editor as `plan` updates only (no tool card for
update_plan), the harness's own verification lines are part of the turn's answer, not the model's thoughts, and a
session that never answered a prompt cannot be loaded, with an error that says why."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, call, drive, write_script

pytestmark = pytest.mark.slow


def test_the_plan_is_a_plan_update_only_and_verification_is_the_turns_own_text(tmp_path: Path,
                                                                             isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "stats.py").write_text("def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    (ws / "test_stats.py").write_text("from stats import mean\n\n\ndef test_mean():\n    assert mean([1, 2, 3]) == 2\n")
    steps = [{"step": "Fix mean", "status": "in_progress"}]
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("update_plan", "p1", steps=steps)]},
        {"tool_calls": [call("edit_file", "e1", path="stats.py", old="(len(xs) + 1)", new="len(xs)")]},
        {"text": "Fixed."}])
    config = isolated_home / "config"
    config.mkdir(parents=True, exist_ok=True)
    (config / "config.toml").write_text(
        f"test_command = {json.dumps(f'{sys.executable} -m pytest -q -p no:cacheprovider')}\n")

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("fix mean")])
        assert done.stop_reason == "end_turn"
        assert client.kinds(session.session_id).count("plan") == 1
        assert client.tool_updates("p1") == []  # no tool card, no raw JSON for the plan
        answer = client.text(session.session_id)
        assert "⧗ verifying" in answer and "✓ tests pass" in answer, answer
        assert "verifying" not in client.text(session.session_id, "agent_thought_chunk")

    drive(ws, model, body, Recorder(["allow_always"]))


def test_a_session_never_prompted_cannot_be_loaded_and_the_error_says_why(tmp_path: Path,
                                                                          isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    model = write_script(tmp_path / "s.json", [])

    async def opened(conn: Any, client: Recorder, process: Any) -> str:
        return str((await conn.new_session(cwd=str(ws))).session_id)

    session_id = drive(ws, model, opened)

    async def load(conn: Any, client: Recorder, process: Any) -> None:
        from acp import RequestError

        with pytest.raises(RequestError) as refused:
            await conn.load_session(cwd=str(ws), session_id=session_id)
        said = str(refused.value.data or refused.value)
        assert "once it has answered a prompt" in said and session_id in said, said

    drive(ws, model, load)

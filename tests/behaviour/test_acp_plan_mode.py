"""ACP's session modes include plan: in it the model gets only the read-only tools (a write it tries is no tool at
all) and nothing changes; switched to another mode, the next prompt carries the plan out."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, call, drive, write_script

pytestmark = pytest.mark.slow


def test_plan_mode_changes_nothing_and_edits_mode_carries_the_plan_out(tmp_path: Path, isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("write_file", "w1", path="a.py", content="x = 2\n")]},
        {"tool_calls": [call("update_plan", "p1", steps=[{"step": "Set x to 2", "status": "pending"}])]},
        {"text": "I will set x to 2."},
        {"tool_calls": [call("write_file", "w2", path="a.py", content="x = 2\n")]},
        {"text": "done"}])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        sid = session.session_id
        assert "plan" in [m.id for m in session.modes.available_modes]
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        assert (await conn.prompt(session_id=sid, prompt=[text_block("make x 2")])).stop_reason == "end_turn"
        assert (ws / "a.py").read_text() == "x = 1\n"
        refused = client.tool_updates("w1")[-1]
        assert refused.status == "failed" and "unknown tool 'write_file'" in str(refused.raw_output)
        await conn.set_session_mode(session_id=sid, mode_id="edits")
        assert (await conn.prompt(session_id=sid, prompt=[text_block("go ahead")])).stop_reason == "end_turn"

    client = Recorder([])
    drive(ws, model, body, client)
    assert client.asked == [] and (ws / "a.py").read_text() == "x = 2\n"

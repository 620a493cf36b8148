"""Over ACP, "allow always" writes the [[permissions]] rule that allows the like of the call to the user's own rules
for the project (in the user state dir, never in the workspace): the next session allows the same kind of call
without asking."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, call, drive, write_script

from cli_agent.config import own_rules_file

pytestmark = pytest.mark.slow


def _turn(ws: Path, model: str, client: Recorder) -> None:
    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        done = await conn.prompt(session_id=session.session_id, prompt=[text_block("make it")])
        assert done.stop_reason == "end_turn"

    drive(ws, model, body, client)


def test_allow_always_writes_a_rule_the_next_session_keeps(tmp_path: Path, isolated_home: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    first = Recorder(["allow_always"])
    _turn(ws, write_script(tmp_path / "one.json", [
        {"tool_calls": [call("create_file", "c1", path="src/a.py", content="a = 1\n")]},
        {"tool_calls": [call("create_file", "c2", path="src/b.py", content="b = 1\n")]},
        {"text": "made them"}]), first)
    assert [a.tool_call_id for a in first.asked] == ["c1"]  # the rule held at once for src/b.py
    kept = own_rules_file(ws)
    assert kept.is_relative_to(isolated_home) and 'paths = ["src/**"]' in kept.read_text()
    assert sorted(p.name for p in ws.rglob("*")) == ["a.py", "b.py", "src"]  # no rule file in the workspace

    second = Recorder(["reject_once"])
    _turn(ws, write_script(tmp_path / "two.json", [
        {"tool_calls": [call("create_file", "c3", path="src/c.py", content="c = 1\n")]},
        {"tool_calls": [call("create_file", "c4", path="notes.md", content="n\n")]},
        {"text": "made it"}]), second)
    assert [a.tool_call_id for a in second.asked] == ["c4"]  # src/c.py by the rule; notes.md is still asked about
    assert (ws / "src" / "c.py").exists() and not (ws / "notes.md").exists()

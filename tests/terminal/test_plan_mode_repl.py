"""Plan mode in the REPL: /plan (or Shift+Tab) offers the model only the read-only tools, so a write it tries is no
tool at all and nothing changes; the plan is shown and the user is asked to approve it and pick the mode to go on
in; approved, the plan runs as the next turn's checklist. `/permissions` lists the rules, and `/approval default`
is `ask`."""

from __future__ import annotations

import pytest
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow

PLAN = [{"step": "Set x to 2 in a.py", "status": "pending"}]
WRITE = {"name": "write_file", "arguments": {"path": "a.py", "content": "x = 2\n"}}


def _replies() -> list[dict]:
    return [{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
            {"tool_calls": [WRITE]},
            {"tool_calls": [{"name": "update_plan", "arguments": {"steps": PLAN}}]},
            {"text": "I will set x to 2."},
            {"tool_calls": [{"name": "update_plan", "arguments": {"steps": [PLAN[0] | {"status": "completed"}]}},
                            {**WRITE, "arguments": {"path": "a.py", "content": "x = 2\n"}}]},
            {"text": "done: x is 2"}]


def test_plan_mode_changes_nothing_shows_the_plan_and_approving_it_runs_it(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    t = Term(tmp_path, _replies(), ws)
    t.say("/plan")
    t.expect("read only")
    t.expect(PROMPT)
    t.say("make x 2")
    shown = t.expect(r"Approve the plan\?")
    flat = " ".join(shown.split())
    assert "Set x to 2 in a.py" in flat and "I will set x to 2." in flat, flat
    assert (ws / "a.py").read_text() == "x = 1\n"  # nothing changed while planning
    refused = [r for r in t.traces() if r.get("type") == "tool_result" and r.get("tool") == "write_file"]
    assert refused and "unknown tool 'write_file'" in str(refused[0]), refused
    t.child.send("e")
    t.expect("done: x is 2")
    t.expect(PROMPT)
    assert (ws / "a.py").read_text() == "x = 2\n"  # approved in edits mode: written without another question
    t.say("/approval")
    t.expect("approval: edits")
    t.expect(PROMPT)
    t.say("/approval default")
    t.expect("approval: ask")
    t.expect(PROMPT)
    t.say("/permissions")
    t.expect(r"no \[\[permissions\]\] rules")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_keep_planning_stays_in_plan_mode(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    t = Term(tmp_path, [{"tool_calls": [{"name": "update_plan", "arguments": {"steps": PLAN}}]},
                        {"text": "I will set x to 2."}], ws, args=("--mode", "plan"))
    t.say("make x 2")
    t.expect(r"Approve the plan\?")
    t.child.send("n")
    t.expect("still in plan mode")
    t.expect(PROMPT)
    t.say("/approval")
    t.expect("approval: plan")
    t.expect(PROMPT)
    assert t.quit() == 0
    assert (ws / "a.py").read_text() == "x = 1\n"

"""The loop's side of update_plan: each accepted plan is a PlanUpdated event (the REPL, ACP, stream-json and the
trace all see it), a refused one is not, and `--output json` reports the last one."""

from __future__ import annotations

import io
import json

from agentkit import call, make_agent, run

from cli_agent.contracts.events import PlanUpdated, ToolResult
from cli_agent.ui.headless.printers import JsonReport

STEPS = [{"step": "Read app.py", "status": "in_progress"}, {"step": "Fix the bug", "status": "pending"}]
DONE = [{"step": "Read app.py", "status": "completed"}, {"step": "Fix the bug", "status": "completed"}]


def test_each_plan_the_model_sets_is_an_event_and_the_report_keeps_the_last(ws):
    (ws / "app.py").write_text("x = 1\n")
    agent, _ = make_agent(ws, [
        {"tool_calls": [call("update_plan", steps=STEPS), call("read_file", path="app.py")]},
        {"tool_calls": [call("update_plan", steps=[{"step": "a", "status": "in_progress"},
                                                   {"step": "b", "status": "in_progress"}])]},
        {"tool_calls": [call("update_plan", steps=DONE, explanation="nothing to fix")]},
        {"text": "done"}])
    events, finished = run(agent, "fix app.py")
    plans = [e for e in events if isinstance(e, PlanUpdated)]
    assert [list(p.steps) for p in plans] == [STEPS, DONE] and plans[1].explanation == "nothing to fix"
    assert plans[0].summary == "plan: 0/2 done · now: Read app.py" and plans[1].summary == "plan: 2/2 done"
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.envelope.ok for r in results] == [True, True, False, True]
    out = io.StringIO()
    report = JsonReport(out)
    for event in events:
        report(event)
    report.end(finished)
    assert json.loads(out.getvalue())["plan"] == DONE
    assert PlanUpdated.type in {e.to_dict()["type"] for e in events}


def test_a_run_without_a_plan_reports_none(ws):
    agent, _ = make_agent(ws, [{"text": "hi"}])
    events, finished = run(agent, "hello")
    report = JsonReport(io.StringIO())
    for event in events:
        report(event)
    assert report.report(finished)["plan"] is None

"""update_plan from the command line: the plan in stream-json, in the trace, and as the final `plan` of
`--output json`."""

from __future__ import annotations

import json

import pytest
from clikit import cli

from cli_agent.history.trace import read_trace

pytestmark = pytest.mark.usefixtures("isolated_home")

STEPS = [{"step": "Look around", "status": "in_progress"}, {"step": "Answer", "status": "pending"}]
DONE = [{"step": "Look around", "status": "completed"}, {"step": "Answer", "status": "completed"}]


def _script(path):
    path.write_text(json.dumps([{"tool_calls": [{"name": "update_plan", "arguments": {"steps": STEPS}}]},
                                {"tool_calls": [{"name": "update_plan", "arguments": {"steps": DONE}}]},
                                {"text": "All done."}]))
    return f"scripted:{path}"


@pytest.mark.slow
def test_the_plan_is_in_stream_json_in_the_trace_and_in_the_json_report(tmp_path, ws):
    home, trace = tmp_path / "home", tmp_path / "t.jsonl"
    streamed = cli(["-C", str(ws), "-p", "go", "--model", _script(tmp_path / "s.json"), "--output", "stream-json",
                    "--trace", str(trace)], home=home)
    assert streamed.returncode == 0, streamed.stderr
    plans = [e["steps"] for e in map(json.loads, streamed.stdout.splitlines()) if e["type"] == "plan_updated"]
    assert plans == [STEPS, DONE]
    assert [list(e.steps) for e in read_trace(trace).events if e.type == "plan_updated"] == [STEPS, DONE]
    report = cli(["-C", str(ws), "-p", "go", "--model", _script(tmp_path / "s.json"), "--output", "json"], home=home)
    assert json.loads(report.stdout)["plan"] == DONE

"""The task tool from the command line and over ACP's turn: a helper reads a file and answers; its events are in
stream-json and the trace under the parent's call, and a replay plays its requests back in order."""

from __future__ import annotations

import json

import pytest
from clikit import cli

from cli_agent.history.trace import read_trace

pytestmark = pytest.mark.usefixtures("isolated_home")

REPLIES = [
    {"tool_calls": [{"name": "task", "arguments": {"description": "Read the version",
                                                   "prompt": "What version does VERSION hold?"}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "VERSION"}}]},
    {"text": "VERSION holds 3.1.4."},
    {"text": "The version is 3.1.4."}]


@pytest.mark.slow
def test_a_helper_answers_and_its_events_are_under_the_parents_call(tmp_path, ws):
    (ws / "VERSION").write_text("3.1.4\n")
    (tmp_path / "s.json").write_text(json.dumps(REPLIES))
    trace = tmp_path / "t.jsonl"
    done = cli(["-C", str(ws), "-p", "which version?", "--model", f"scripted:{tmp_path / 's.json'}",
                "--output", "stream-json", "--trace", str(trace)], home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    task_id = next(e for e in events if e["type"] == "tool_calls_proposed")["calls"][0]["id"]
    nested = [e for e in events if e["type"] == "subagent_event"]
    assert nested and {e["call_id"] for e in nested} == {task_id}
    assert [e["event"]["tool"] for e in nested if e["event"]["type"] == "tool_result"] == ["read_file"]
    assert events[-1]["answer"] == "The version is 3.1.4."
    assert [e.type for e in read_trace(trace).events].count("subagent_event") == len(nested)
    replayed = cli(["replay", str(trace)], home=tmp_path / "home")
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr


@pytest.mark.slow
def test_a_helpers_write_is_undone_and_replayed_with_its_recorded_approval(tmp_path, ws):
    from clikit import user_config

    home = tmp_path / "home"
    user_config(home, '[agents.writer]\ntools = ["read_file", "create_file"]\n')
    (tmp_path / "s.json").write_text(json.dumps([
        {"tool_calls": [{"name": "task", "arguments": {"description": "Write notes", "prompt": "Create notes.txt.",
                                                       "agent": "writer"}}]},
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "notes.txt", "content": "hi\n"}}]},
        {"text": "Created."},
        {"text": "Done."}]))
    trace = tmp_path / "t.jsonl"
    done = cli(["-C", str(ws), "-p", "write notes", "--model", f"scripted:{tmp_path / 's.json'}", "--yes",
                "--trace", str(trace)], home=home)
    assert done.returncode == 0, done.stderr
    assert (ws / "notes.txt").read_text() == "hi\n"
    replayed = cli(["replay", str(trace)], home=home)
    assert replayed.returncode == 0 and "replay identical" in replayed.stdout + replayed.stderr

"""Tool-call ids are unique within a session whatever the server sends (`call_0` every reply, none at all, the json
protocol's per-run numbers): every event keyed on an id names one call, and the conversation sent back to the
model stays consistent (each result answers the id its call has there; the scripted provider checks it)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from agentkit import make_agent, run

from cli_agent.contracts.events import ToolCallsProposed, ToolResult

READ = {"tool_calls": [{"name": "read_file", "id": "call_0", "arguments": {"path": "a.txt"}}]}


def ids(events: list) -> list[str]:
    return [c.id for e in events if isinstance(e, ToolCallsProposed) for c in e.calls]


def test_repeated_ids_are_renamed_and_the_conversation_follows(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    agent, provider = make_agent(tmp_path, [READ, READ, {"text": "one"}, READ, READ, {"text": "two"}])
    first, _ = run(agent, "read it twice")
    second, _ = run(agent, "and again")
    proposed = ids(first) + ids(second)
    assert proposed[0] == "call_0" and len(set(proposed)) == 4
    assert all(re.fullmatch(r"call\d{5}", i) for i in proposed[1:])  # 9 letters and digits: Mistral's rule
    assert [e.call_id for e in first + second if isinstance(e, ToolResult)] == proposed
    last = provider.requests[-1].messages
    assert [c.id for m in last for c in m.tool_calls] == proposed
    assert [m.tool_call_id for m in last if m.role == "tool"] == proposed


def test_json_protocol_ids_do_not_restart_with_each_run_nor_after_a_resume(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    call = {"text": json.dumps({"tool": "read_file", "parameters": {"path": "a.txt"}, "terminate": False})}
    agent, _ = make_agent(tmp_path, [call, {"text": "one"}, call, {"text": "two"}], protocol="json")
    first, _ = run(agent, "read")
    second, _ = run(agent, "read again")
    assert len(set(ids(first) + ids(second))) == 2



def test_a_resumed_conversation_keeps_its_ids_taken(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("hello\n")
    earlier, _ = make_agent(tmp_path, [READ, {"text": "one"}])
    run(earlier, "read")
    resumed, provider = make_agent(tmp_path, [READ, {"text": "two"}])
    resumed.clear(earlier.history)  # what resuming a session does
    after, _ = run(resumed, "once more")
    assert ids(after) != ["call_0"] and len(ids(after)) == 1
    assert [m.tool_call_id for m in provider.requests[-1].messages if m.role == "tool"] == ["call_0", ids(after)[0]]

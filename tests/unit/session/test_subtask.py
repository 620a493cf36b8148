"""The task tool: a helper in a conversation of its own reads a file and answers; it can only read unless an agent
type allows more, and then its writes are asked for as the parent's; it spends the parent run's budgets; its
events come under the parent's call."""

from __future__ import annotations

from agentkit import Answers, call, make_agent, run

from cli_agent.config.hook_settings import AgentType
from cli_agent.contracts.events import (
    ApprovalAsked,
    Decision,
    StopReason,
    SubagentEvent,
    ToolCallsProposed,
    ToolResult,
)
from cli_agent.session.subtask import Subtasks
from cli_agent.tools.registry import Registry

FIND = call("task", description="Find the retry limit", prompt="Where is the retry limit set? Say the value.")


def _result(events, tool="task"):
    return next(e for e in events if isinstance(e, ToolResult) and e.tool == tool)


def test_a_helper_reads_a_file_in_its_own_conversation_and_answers(ws):
    (ws / "settings.py").write_text("RETRIES = 7\n")
    agent, provider = make_agent(ws, [
        {"tool_calls": [FIND]},
        {"tool_calls": [call("read_file", path="settings.py")]},  # the helper
        {"text": "RETRIES = 7, in settings.py line 1."},  # the helper's answer
        {"text": "The retry limit is 7."}])
    events, finished = run(agent, "what is the retry limit?")
    assert finished.stop_reason is StopReason.DONE and finished.answer == "The retry limit is 7."
    task = _result(events)
    assert task.envelope.ok and task.envelope.data["answer"] == "RETRIES = 7, in settings.py line 1."
    assert task.envelope.data["steps"] == 2
    helper_first = provider.requests[1]
    assert [m.role for m in helper_first.messages][-1] == "user" and len(helper_first.messages) == 2  # its own
    assert helper_first.messages[-1].content.startswith("Where is the retry limit set?")
    offered = {t["function"]["name"] for t in helper_first.tools}
    assert {"list_files", "read_file", "search"} <= offered  # read-only by default: what changes nothing, asks nothing
    assert not offered & {"task", "update_plan", "create_file", "run_command", "web_fetch", "propose_fact"}
    assert not any(spec.mutates or spec.requires_approval or spec.optional for spec in Registry.builtin().specs()
                   if spec.name in offered)
    nested = [e for e in events if isinstance(e, SubagentEvent)]
    proposed = [e for e in events if isinstance(e, ToolCallsProposed)]
    assert {e.call_id for e in nested} == {proposed[0].calls[0].id}  # under the parent's call
    assert [e.event["type"] for e in nested if e.event["type"] in ("tool_result", "run_finished")] == [
        "tool_result", "run_finished"]
    assert finished.steps == 4  # the helper's two model requests count for the run


def test_a_helper_asked_to_write_cannot_by_default(ws):
    agent, _ = make_agent(ws, [
        {"tool_calls": [call("task", description="Write a file", prompt="Create notes.txt saying hi.")]},
        {"tool_calls": [call("create_file", path="notes.txt", content="hi")]},
        {"text": "I cannot create files here."},
        {"text": "The helper could not write."}], yes=True)
    events, finished = run(agent, "delegate a write")
    assert not (ws / "notes.txt").exists() and finished.answer == "The helper could not write."
    inner = [e.event for e in events if isinstance(e, SubagentEvent) and e.event["type"] == "tool_result"]
    assert inner[0]["envelope"]["ok"] is False and "unknown tool 'create_file'" in inner[0]["envelope"]["errors"][0]
    assert _result(events).envelope.data["answer"] == "I cannot create files here."


def _with_writer(agent):
    setup = agent._setup
    setup.subtasks = Subtasks(type(setup.subtasks.settings)(agents={"writer": AgentType(
        tools=["read_file", "create_file"], instructions="Keep files short.")}), setup)
    agent._approvals.subtasks = setup.subtasks


def test_an_agent_type_may_write_and_its_writes_are_asked_for(ws):
    agent, provider = make_agent(ws, [
        {"tool_calls": [call("task", description="Write notes", prompt="Create notes.txt saying hi.",
                             agent="writer")]},
        {"tool_calls": [call("create_file", path="notes.txt", content="hi\n")]},
        {"text": "Created notes.txt."},
        {"text": "Done."}], interactive=True)
    _with_writer(agent)
    answers = Answers(Decision.YES)
    events, finished = run(agent, "write notes", answers)
    assert (ws / "notes.txt").read_text() == "hi\n" and finished.stop_reason is StopReason.DONE
    assert [a.call.name for a in answers.asked] == ["create_file"]  # asked, as the parent's writes are
    assert any(isinstance(e, ApprovalAsked) for e in events)
    assert provider.requests[1].messages[-1].content.startswith("Keep files short.")


def test_a_denied_helper_write_leaves_nothing_and_fails_the_task(ws):
    agent, _ = make_agent(ws, [
        {"tool_calls": [call("task", description="Write notes", prompt="Create notes.txt.", agent="writer")]},
        {"tool_calls": [call("create_file", path="notes.txt", content="hi\n")]},
        {"text": "The helper was stopped."}])  # not interactive, no --yes: the write is denied
    _with_writer(agent)
    events, finished = run(agent, "write notes")
    assert not (ws / "notes.txt").exists()
    task = _result(events)
    assert not task.envelope.ok and task.envelope.data["stop_reason"] == "denied"
    assert finished.answer == "The helper was stopped."


def test_an_unknown_agent_type_is_said_to_the_model(ws):
    agent, provider = make_agent(ws, [
        {"tool_calls": [call("task", description="x", prompt="y", agent="wizard")]}, {"text": "ok"}])
    events, _ = run(agent, "go")
    assert "unknown agent type 'wizard'" in _result(events).envelope.errors[0] and len(provider.requests) == 2


def test_the_helper_shares_the_parent_runs_step_limit(ws):
    agent, provider = make_agent(ws, [
        {"tool_calls": [FIND]},
        {"tool_calls": [call("list_files")]},
        {"tool_calls": [call("list_files", path=".")]},
        {"tool_calls": [call("list_files", depth=1)]},
        {"text": "never"}], max_steps=3)
    events, finished = run(agent, "find it")
    task = _result(events)
    assert not task.envelope.ok and task.envelope.data["stop_reason"] == "step_limit"
    assert finished.stop_reason is StopReason.STEP_LIMIT and len(provider.requests) == 3

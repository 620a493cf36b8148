"""The agent loop, branch by branch, with the scripted provider over a real workspace."""

from __future__ import annotations

import json

import pytest
from agentkit import Answers, call, make_agent, run

from cli_agent.contracts.events import (
    ApprovalAsked,
    Decision,
    ModelRequest,
    Retry,
    RunFinished,
    StopReason,
    TextDelta,
    ToolCallsProposed,
    ToolResult,
    Warning,
)
from cli_agent.providers.scripted import ScriptError
from cli_agent.session.session import drive


def of(events, kind):
    return [e for e in events if isinstance(e, kind)]


def test_plain_answer_ends_the_run_after_one_request(tmp_path):
    agent, provider = make_agent(tmp_path, [{"text": "Hello there."}])
    events, finished = run(agent, "hi")
    assert finished.stop_reason is StopReason.DONE and finished.exit_code == 0
    assert finished.answer == "Hello there." and finished.steps == 1
    assert "".join(e.text for e in of(events, TextDelta)) == "Hello there."
    assert len(provider.requests) == 1
    assert provider.requests[0].tools, "the native protocol sends tool schemas"
    assert provider.requests[0].messages[0].role == "system"


def test_chained_calls_create_a_file_and_answer(tmp_path):
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("list_files")]},
        {"tool_calls": [call("create_file", path="app.py", content="print('hi')\n")]},
        {"text": "Created app.py."},
    ], yes=True)
    events, finished = run(agent, "make an app")
    assert finished.stop_reason is StopReason.DONE
    assert (tmp_path / "app.py").read_text() == "print('hi')\n"
    assert len(provider.requests) == 3
    last = provider.requests[2].messages
    assert [m.role for m in last[-4:]] == ["assistant", "tool", "assistant", "tool"]
    assert json.loads(last[-1].content)["ok"] is True
    results = of(events, ToolResult)
    assert [r.tool for r in results] == ["list_files", "create_file"]
    assert results[1].change is not None and results[1].change.path == "app.py"


def test_two_calls_in_one_turn_run_in_order(tmp_path):
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="a.txt", content="a"), call("create_file", path="b.txt",
                                                                              content="b")]},
        {"text": "done"},
    ], yes=True)
    events, finished = run(agent, "two files")
    assert finished.exit_code == 0
    proposed = of(events, ToolCallsProposed)
    assert len(proposed) == 1 and len(proposed[0].calls) == 2
    assert [r.change.path for r in of(events, ToolResult)] == ["a.txt", "b.txt"]


def test_non_interactive_denial_ends_the_run_with_exit_3_and_no_further_request(tmp_path):
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="x.txt", content="x"), call("read_file", path="x.txt")]},
        {"text": "never requested"},
    ])
    events, finished = run(agent, "write")
    assert finished.stop_reason is StopReason.DENIED and finished.exit_code == 3
    assert "--yes" in finished.message
    assert not (tmp_path / "x.txt").exists()
    assert len(provider.requests) == 1 and provider.remaining == 1
    assert not of(events, ToolResult), "no call of the denied turn runs"
    # the conversation stays valid: both calls are answered in the history
    assert [m.role for m in agent.history[-3:]] == ["assistant", "tool", "tool"]


def test_user_denial_stops_later_calls_of_the_turn(tmp_path):
    answers = Answers(Decision.NO)
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="a.txt", content="a"), call("create_file", path="b.txt",
                                                                              content="b")]},
    ], interactive=True)
    _, finished = run(agent, "two", answers)
    assert finished.stop_reason is StopReason.DENIED
    assert len(answers.asked) == 1 and answers.asked[0].total == 2
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()


def test_all_approves_the_rest_of_the_turn_and_later_turns(tmp_path):
    answers = Answers(Decision.ALL)
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="a.txt", content="a"), call("create_file", path="b.txt",
                                                                              content="b")]},
        {"text": "ok"},
        {"tool_calls": [call("delete_file", path="a.txt")]},
        {"text": "deleted"},
    ], interactive=True)
    run(agent, "two", answers)
    _, finished = run(agent, "delete a", answers)
    assert finished.exit_code == 0 and len(answers.asked) == 1
    assert not (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").read_text() == "b"


def test_tool_grant_covers_only_that_tool(tmp_path):
    answers = Answers(Decision.TOOL, Decision.NO)
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="a.txt", content="a"), call("create_file", path="b.txt",
                                                                              content="b"),
                        call("delete_file", path="a.txt")]},
    ], interactive=True)
    _, finished = run(agent, "go", answers)
    assert [a.call.name for a in answers.asked] == ["create_file", "delete_file"]
    assert finished.stop_reason is StopReason.DENIED and (tmp_path / "b.txt").exists()


def test_json_protocol_continues_on_terminate_false_and_stops_on_true(tmp_path):
    (tmp_path / "notes.txt").write_text("one\n")
    agent, provider = make_agent(tmp_path, [
        {"raw": 'Let me look.\n```json\n{"tool": "read_file", "parameters": {"path": "notes.txt"}, '
                '"terminate": false}\n```'},
        {"raw": '{"tool": "edit_file", "parameters": {"path": "notes.txt", "old": "one", "new": "two"}, '
                '"terminate": true}'},
        {"text": "never requested"},
    ], protocol="json", yes=True)
    events, finished = run(agent, "update notes")
    assert finished.stop_reason is StopReason.DONE
    assert (tmp_path / "notes.txt").read_text() == "two\n"
    assert len(provider.requests) == 2 and provider.remaining == 1
    assert provider.requests[0].tools is None, "the json protocol sends no native schemas"
    assert "Result of read_file" in provider.requests[1].messages[-1].content
    assert not of(events, TextDelta), "raw JSON is not streamed to the user"


def test_json_protocol_three_malformed_replies_exit_6(tmp_path):
    agent, provider = make_agent(tmp_path, [
        {"raw": '{"tool": "read_file", "parameters": {"path": "a"'},
        {"raw": '{"tool": "read_file", "parameters": "a", "terminate": false}'},
        {"raw": '{"tool": "a", "parameters": {}, "terminate": false} {"tool": "b", "parameters": {}, '
                '"terminate": false}'},
    ], protocol="json")
    events, finished = run(agent, "go")
    assert finished.stop_reason is StopReason.UNUSABLE and finished.exit_code == 6
    feedback = [r.messages[-1].content for r in provider.requests[1:]]
    assert "line 1, column" in feedback[0] and '"terminate": false' in feedback[0]
    assert 'field "parameters" must be an object' in feedback[1]
    assert len(of(events, Warning)) == 3


def test_a_good_reply_resets_the_strikes(tmp_path):
    replies = [{"raw": '{"tool": 1}'}, {"raw": '{"tool": 2}'}, {"raw": '{"tool": "list_files", "parameters": {}, '
                                                                        '"terminate": false}'},
               {"raw": '{"tool": 3}'}, {"raw": '{"tool": 4}'}, {"text": "fine"}]
    agent, _ = make_agent(tmp_path, replies, protocol="json")
    _, finished = run(agent, "go")
    assert finished.stop_reason is StopReason.DONE and finished.answer == "fine"


@pytest.mark.parametrize(("bad_call", "expected"), [
    ({"name": "rm_rf", "arguments": {}}, "unknown tool 'rm_rf'"),
    ({"name": "read_file", "arguments": {"path": 5}}, "argument 'path'"),
    ({"name": "read_file", "arguments": {}}, "missing required argument"),
    ({"name": "read_file", "arguments": "{not json"}, "not a JSON object"),
    ({"name": "", "arguments": {}}, "empty name"),
])
def test_bad_calls_get_an_error_envelope_and_the_loop_goes_on(tmp_path, bad_call, expected):
    agent, provider = make_agent(tmp_path, [{"tool_calls": [bad_call]}, {"text": "sorry"}])
    events, finished = run(agent, "go")
    assert finished.exit_code == 0
    envelope = of(events, ToolResult)[0].envelope
    assert not envelope.ok and expected in envelope.errors[0]
    assert expected in provider.requests[1].messages[-1].content


def test_empty_reply_is_a_strike_with_a_clear_message(tmp_path):
    agent, provider = make_agent(tmp_path, [{"text": ""}, {"text": "ok"}])
    _, finished = run(agent, "go")
    assert finished.answer == "ok"
    assert "empty" in provider.requests[1].messages[-1].content


def test_step_limit_exits_4_with_a_warning(tmp_path):
    agent, provider = make_agent(tmp_path, [{"tool_calls": [call("list_files")]}] * 5, max_steps=3)
    events, finished = run(agent, "loop forever")
    assert finished.stop_reason is StopReason.STEP_LIMIT and finished.exit_code == 4
    assert len(provider.requests) == 3
    assert any(w.code == "step_limit" for w in of(events, Warning))


def test_timeout_exits_5(tmp_path):
    agent, _ = make_agent(tmp_path, [{"text": "slow", "delay": 5}], timeout_s=0.2)
    _, finished = run(agent, "go")
    assert finished.stop_reason is StopReason.TIMEOUT and finished.exit_code == 5


def test_retryable_errors_are_retried_with_events_then_succeed(tmp_path):
    slept = []
    agent, _ = make_agent(tmp_path, [{"error": "retryable", "message": "HTTP 429"}, {"error": "retryable"},
                                     {"text": "ok"}], sleep=slept.append, retry_base_delay=1.0)
    events, finished = run(agent, "go")
    assert finished.answer == "ok"
    retries = of(events, Retry)
    assert [r.attempt for r in retries] == [1, 2] and "429" in retries[0].reason
    assert 0.5 <= slept[0] <= 1.0 and 1.0 <= slept[1] <= 2.0, "exponential backoff with jitter"


def test_retries_are_bounded_then_exit_1(tmp_path):
    agent, _ = make_agent(tmp_path, [{"error": "retryable"}] * 3, max_retries=2)
    _, finished = run(agent, "go")
    assert finished.stop_reason is StopReason.ERROR and finished.exit_code == 1
    assert "gave up after 3 tries" in finished.message


def test_missing_key_exits_2(tmp_path):
    agent, _ = make_agent(tmp_path, [{"error": "missing_key", "message": "set OPENAI_API_KEY"}])
    _, finished = run(agent, "go")
    assert finished.exit_code == 2 and "OPENAI_API_KEY" in finished.message


def test_a_cut_off_reply_never_runs_a_mutating_tool(tmp_path):
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="big.txt", content="partial")], "finish_reason": "length"},
        {"text": "ok"},
    ], yes=True)
    events, _ = run(agent, "go")
    assert not (tmp_path / "big.txt").exists()
    assert "cut off" in of(events, ToolResult)[0].envelope.errors[0]


def test_large_results_are_cut_with_a_note(tmp_path):
    (tmp_path / "big.txt").write_text("x" * 5000)
    agent, provider = make_agent(tmp_path, [{"tool_calls": [call("read_file", path="big.txt")]}, {"text": "ok"}],
                                 tool_result_max_chars=1000)
    events, _ = run(agent, "go")
    sent = provider.requests[1].messages[-1].content
    assert len(sent) < 1300 and "more characters left out" in sent and "start_line" in sent
    assert any(w.code == "truncated" for w in of(events, Warning))


def test_old_results_are_elided_near_the_context_window(tmp_path):
    for name in "abc":
        (tmp_path / f"{name}.txt").write_text(name * 3000)
    replies = [{"tool_calls": [call("read_file", path=f"{n}.txt")]} for n in "abc"] + [{"text": "ok"}]
    agent, provider = make_agent(tmp_path, replies, context_window=3000)
    events, finished = run(agent, "read all")
    assert finished.exit_code == 0
    assert any(w.code == "context_elided" for w in of(events, Warning))
    assert "[elided to fit the context window" in provider.requests[-1].messages[2 + 1].content


def test_budget_warns_at_80_percent_and_stops_at_the_cap(tmp_path):
    usage = {"prompt_tokens": 450, "completion_tokens": 0}
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("list_files")], "usage": usage}] * 3,
                          max_tokens_total=1000)
    events, finished = run(agent, "go")
    codes = [w.message for w in of(events, Warning) if w.code == "budget"]
    assert codes[0].startswith("80 %") and finished.stop_reason is StopReason.STEP_LIMIT


def test_conversation_persists_across_runs(tmp_path):
    agent, provider = make_agent(tmp_path, [{"text": "first"}, {"text": "second"}])
    run(agent, "one")
    run(agent, "two")
    contents = [m.content for m in provider.requests[1].messages]
    assert "one" in contents and "first" in contents and contents[-1] == "two"


def test_ctrl_c_in_the_front_end_finishes_the_run_and_keeps_history_valid(tmp_path):
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("list_files"), call("list_files")]},
                                            {"text": "after"}])

    def sink(event):
        if isinstance(event, ToolCallsProposed):
            raise KeyboardInterrupt

    finished = drive(agent.run("go", Answers()), sink)
    assert finished.stop_reason is StopReason.INTERRUPTED and finished.exit_code == 130
    _, again = run(agent, "next")  # the scripted provider checks every call was answered
    assert again.answer == "after"


def test_plain_chat_sends_no_tools_and_no_enhanced_prompt(tmp_path):
    agent, provider = make_agent(tmp_path, [{"text": '{"tool": "x", "parameters": {}, "terminate": true}'}],
                                 protocol="plain")
    _, finished = run(agent, "hi")
    assert finished.answer.startswith('{"tool"')
    assert provider.requests[0].tools is None
    assert [m.role for m in provider.requests[0].messages] == ["user"]


def test_every_request_carries_the_plan_fingerprint(tmp_path):
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("list_files")]}, {"text": "ok"}])
    events, _ = run(agent, "go")
    prints = {e.fingerprint for e in of(events, ModelRequest)}
    assert len(prints) == 1 and len(next(iter(prints))) == 64


def test_approval_event_carries_the_change(tmp_path):
    answers = Answers(Decision.YES)
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("create_file", path="n.txt", content="new\n")]},
                                     {"text": "ok"}], interactive=True)
    events, _ = run(agent, "go", answers)
    asked = of(events, ApprovalAsked)[0]
    assert asked.change is not None and "+new" in asked.change.diff()
    assert of(events, RunFinished)[0].exit_code == 0


def test_no_request_after_the_end(tmp_path):
    agent, provider = make_agent(tmp_path, [{"text": "done"}])
    run(agent, "go")
    with pytest.raises(ScriptError):
        list(provider.stream(provider.requests[0]))


def test_json_protocol_accepts_raw_newlines_inside_strings(tmp_path):
    """Grammar-constrained small models write multi-line text with literal newlines inside JSON strings."""
    agent, _ = make_agent(tmp_path, [{"raw": '{"tool": "answer", "parameters": {"text": "line one\nline two"}, '
                                             '"terminate": true}'}], protocol="json")
    _, finished = run(agent, "explain")
    assert finished.stop_reason is StopReason.DONE and finished.answer == "line one\nline two"


def _answered_by_data(agent, prompt, decision):
    """Drive a run the way a server front end does: no callback; each question answered by sending a Decision.
    Returns the events and the run's own return value."""
    events, stream = [], agent.run(prompt)
    answer = None
    try:
        while True:
            event = stream.send(answer)
            events.append(event)
            answer = decision if isinstance(event, ApprovalAsked) else None
    except StopIteration as stop:
        return events, stop.value


@pytest.mark.parametrize(("decision", "reason"), [(Decision.YES, StopReason.DONE), (Decision.NO, StopReason.DENIED)])
def test_approval_can_be_sent_as_data_and_run_returns_its_result(tmp_path, decision, reason):
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("create_file", path="n.txt", content="N")]},
                                     {"text": "made it"}], interactive=True)
    events, finished = _answered_by_data(agent, "make n.txt", decision)
    assert isinstance(finished, RunFinished) and finished is events[-1]
    assert finished.stop_reason is reason
    assert (tmp_path / "n.txt").exists() == (decision is Decision.YES)


def test_with_no_callback_and_no_answer_sent_a_change_is_denied(tmp_path):
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("create_file", path="n.txt", content="N")]}],
                          interactive=True)
    finished = drive(agent.run("make n.txt"))
    assert finished.stop_reason is StopReason.DENIED and not (tmp_path / "n.txt").exists()

"""Hooks with real commands: one process per hook, the event as JSON on stdin, exit 2 blocks, a hanging hook is
killed (with what it started) at its timeout, and what each event's outcome does to a run of the loop."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest
from agentkit import call, make_agent, run

from cli_agent.config.hook_settings import Hook
from cli_agent.contracts.events import HookRan, StopReason, ToolResult
from cli_agent.contracts.messages import ToolCall
from cli_agent.hooks import Hooks
from cli_agent.hooks.process import OUTPUT_MAX, run_hook

pytestmark = pytest.mark.slow  # every test here starts processes

PY = sys.executable


def _events(gen):
    out = []
    try:
        while True:
            out.append(next(gen))
    except StopIteration as stop:
        return out, stop.value


def test_a_hook_gets_the_event_as_json_on_stdin(tmp_path):
    hooks = Hooks([Hook(event="before_tool", command=f"cat > {tmp_path}/event.json")], tmp_path)
    events, blocked = _events(hooks.before_tool(ToolCall("c1", "read_file", {"path": "a.py"}, ""), None))
    assert blocked is None and events[0].exit_code == 0
    got = json.loads((tmp_path / "event.json").read_text())
    assert got == {"event": "before_tool", "cwd": str(tmp_path), "tool_name": "read_file",
                   "tool_input": {"path": "a.py"}, "call_id": "c1"}


def test_exit_2_blocks_with_stderr_as_the_reason_and_other_codes_do_not(tmp_path):
    hooks = Hooks([Hook(event="before_tool", command="echo careful >&2; exit 1"),
                   Hook(event="before_tool", match="write_.*|create_file", command="echo no writes here >&2; exit 2"),
                   Hook(event="before_tool", command="echo never reached")], tmp_path)
    events, blocked = _events(hooks.before_tool(ToolCall("c1", "write_file", {}, ""), None))
    assert blocked == "blocked by a before_tool hook: no writes here"
    assert [(e.exit_code, e.blocked) for e in events] == [(1, False), (2, True)]
    events, blocked = _events(hooks.before_tool(ToolCall("c2", "read_file", {}, ""), None))
    assert blocked is None and [e.exit_code for e in events] == [1, 0]  # match: the whole name, as a regex


def test_a_hanging_hook_is_killed_at_its_timeout_with_what_it_started(tmp_path):
    marker = tmp_path / "late"
    command = f"(sleep 3; touch {marker}) & sleep 60"
    started = time.monotonic()
    out = run_hook(command, b"{}", tmp_path, 1.0, {})
    assert out.timed_out and out.exit_code is None and time.monotonic() - started < 30
    time.sleep(4)
    assert not marker.exists()  # its child died with it


def test_output_is_bounded_and_a_hook_that_never_reads_stdin_still_runs(tmp_path):
    out = run_hook(f"{PY} -c \"import sys; sys.stdout.write('x' * 3_000_000)\"", b"y" * 2_000_000, tmp_path, 30,
                   {})
    assert out.exit_code == 0 and len(out.stdout) == OUTPUT_MAX


def test_a_hook_that_cannot_run_is_an_error_not_a_block(tmp_path):
    out = run_hook("/no/such/hook", b"{}", tmp_path, 10, {})
    assert out.exit_code == 127 and "No such file" in out.stderr


# -- in a run of the loop --------------------------------------------------------------------------------------

def _agent(ws: Path, replies, hooks):
    agent, provider = make_agent(ws, replies, yes=True)
    agent._approvals.hooks = Hooks(hooks, ws)
    return agent, provider


def test_a_blocked_call_is_not_run_and_the_model_gets_the_reason(ws):
    agent, provider = _agent(ws, [{"tool_calls": [call("create_file", path="a.txt", content="a")]},
                                  {"text": "understood"}],
                             [Hook(event="before_tool", match="create_file",
                                   command="echo use edits only >&2; exit 2")])
    events, finished = run(agent, "make a")
    assert not (ws / "a.txt").exists()
    assert finished.stop_reason is StopReason.DONE  # the block is the hook doing its job, not a failed change
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.envelope.errors == ("blocked by a before_tool hook: use edits only",)
    assert "use edits only" in json.dumps(provider.requests[-1].messages[-1].to_dict())


def test_after_tool_hooks_see_the_result_and_their_exit_2_is_told_to_the_model(ws):
    hook = Hook(event="after_tool", match="create_file",
                command=f"{PY} -c \"import json,sys; e=json.load(sys.stdin); print(e['tool_response']['ok']); "
                        f"sys.stderr.write('formatted ' + e['tool_input']['path']); sys.exit(2)\"")
    agent, provider = _agent(ws, [{"tool_calls": [call("create_file", path="a.txt", content="a")]}, {"text": "ok"}],
                             [hook])
    events, _ = run(agent, "make a")
    ran = next(e for e in events if isinstance(e, HookRan))
    assert ran.event == "after_tool" and ran.stdout.strip() == "True" and ran.tool == "create_file"
    assert (ws / "a.txt").read_text() == "a"  # it ran: after_tool cannot undo it
    assert "an after_tool hook says: formatted a.txt" in json.dumps(provider.requests[-1].messages[-1].to_dict())


def test_a_stop_hook_that_exits_2_sends_the_model_back_to_work_once(ws):
    seen = ws.parent / "stopped-once"
    hook = Hook(event="stop", command=f"test -e {seen} && exit 0; touch {seen}; echo run the tests first >&2; exit 2")
    agent, provider = _agent(ws, [{"text": "done"}, {"text": "tests pass, done"}], [hook])
    events, finished = run(agent, "fix it")
    assert finished.answer == "tests pass, done" and len(provider.requests) == 2
    assert "run the tests first" in provider.requests[1].messages[-1].content
    assert [e.blocked for e in events if isinstance(e, HookRan)] == [True, False]


def test_a_prompt_hook_adds_its_words_or_blocks_the_prompt(ws):
    agent, provider = _agent(ws, [{"text": "ok"}], [Hook(event="prompt", command="echo 'Today is a holiday.'")])
    run(agent, "what day is it?")
    assert "Today is a holiday." in provider.requests[0].messages[-1].content
    agent, provider = _agent(ws, [{"text": "never"}], [Hook(event="prompt", command="echo no secrets >&2; exit 2")])
    _, finished = run(agent, "print the API key")
    assert finished.stop_reason is StopReason.DENIED and finished.exit_code == 3 and "no secrets" in finished.message
    assert provider.requests == [] and agent.history == []


# -- whatever a hook starts, it is bounded and gone -------------------------------------------------------------

def _alive(tag: str) -> list[str]:
    """The processes whose command line holds `tag`, as `ps` sees them."""
    import subprocess
    listing = subprocess.run(["ps", "-eo", "pid=,args="], capture_output=True, text=True, check=True).stdout
    return [line for line in listing.splitlines() if tag in line and "ps -eo" not in line]


def test_a_daemon_that_keeps_the_hooks_stdout_open_neither_holds_the_run_nor_outlives_the_hook(tmp_path):
    started = time.monotonic()
    out = run_hook("setsid sleep 3272 & sleep 0.5; echo hi", b"{}", tmp_path, 20.0, {})
    assert time.monotonic() - started < 5 and out.exit_code == 0 and out.stdout == "hi\n"
    assert _alive("sleep 3272") == []


def test_a_double_fork_that_calls_setsid_is_killed_at_the_timeout(tmp_path):
    command = f"{PY} -c \"import os,time\nif os.fork(): os._exit(0)\nos.setsid()\nif os.fork(): os._exit(0)\n" \
              "os.execvp('sleep', ['sleep', '3273'])\" >/dev/null 2>&1 </dev/null; sleep 60"
    started = time.monotonic()
    out = run_hook(command, b"{}", tmp_path, 1.0, {})
    assert out.timed_out and time.monotonic() - started < 5
    assert _alive("sleep 3273") == []

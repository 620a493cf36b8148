"""Adversarial model replies, fuzzed with hypothesis: through both protocols' parsers, and through full Agent runs
with the scripted provider. Nothing crashes the loop (every run ends with one RunFinished, never an internal
error), and a tool whose arguments fail validation never runs."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from agentkit import make_agent
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from hypothesis.errors import InvalidArgument

from cli_agent.agent.wire import JsonProtocol, NativeProtocol
from cli_agent.contracts.events import RunFinished, StopReason, ToolCallsProposed, ToolResult
from cli_agent.contracts.messages import ToolCall
from cli_agent.providers.base import ProviderReply, decode_tool_call
from cli_agent.session.session import drive
from cli_agent.tools.registry import Registry

PARSE_EXAMPLES = 300
RUN_EXAMPLES = 120
TOOLS = ("list_files", "read_file", "search", "create_file", "edit_file", "write_file", "delete_file",
         "propose_fact")
KEYS = ("path", "content", "old", "new", "pattern", "glob", "literal", "replace_all", "start_line", "end_line",
        "depth", "text", "reason")

json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False)
                           | st.text(max_size=30),
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                                        max_size=3),
                           max_leaves=8)
arguments = st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=8), json_values, max_size=5)
raw_arguments = st.one_of(arguments.map(json.dumps), st.text(max_size=60),
                          st.sampled_from(["", "{", "null", "[]", '{"path": "a.txt"', "{'path': 'a'}", "\ud800",
                                           '{"path": "a.txt"}{"path": "b"}', "1e999", '{"path": NaN}']))
names = st.sampled_from(TOOLS) | st.text(max_size=12)
paths = st.sampled_from(["a.txt", "new.txt", "d/x.txt", "../outside.txt", ".git/x", "", "/etc/passwd"]) | st.text(
    max_size=10)
extra = st.dictionaries(st.text(max_size=5), json_values, max_size=1)
PLAUSIBLE = {
    "create_file": st.fixed_dictionaries({"path": paths, "content": st.text(max_size=20)}),
    "write_file": st.fixed_dictionaries({"path": paths, "content": st.text(max_size=20)}),
    "edit_file": st.fixed_dictionaries({"path": paths, "old": st.sampled_from(["a", "b", "zz", ""]),
                                        "new": st.text(max_size=5)}, optional={"replace_all": st.booleans()}),
    "delete_file": st.fixed_dictionaries({"path": paths}),
    "read_file": st.fixed_dictionaries({"path": paths}, optional={"start_line": st.integers(-2, 5)}),
    "search": st.fixed_dictionaries({"pattern": st.text(max_size=6)}, optional={"literal": st.booleans()}),
}
plausible_calls = st.sampled_from(sorted(PLAUSIBLE)).flatmap(
    lambda tool: st.tuples(st.just(tool), st.one_of(PLAUSIBLE[tool], st.tuples(PLAUSIBLE[tool], extra).map(
        lambda pair: {**pair[0], **pair[1]}))))
finish = st.sampled_from(["stop", "tool_calls", "length", "content_filter", ""])


def json_protocol_text() -> st.SearchStrategy[str]:
    call = st.one_of(st.fixed_dictionaries({"tool": names, "parameters": arguments | json_values,
                                            "terminate": st.booleans() | json_values},
                                           optional={"extra": json_values}),
                     st.tuples(plausible_calls, st.booleans()).map(
                         lambda c: {"tool": c[0][0], "parameters": c[0][1], "terminate": c[1]})).map(json.dumps)
    prose = st.text(max_size=40)
    return st.one_of(st.text(max_size=200), call, st.tuples(prose, call, prose).map("".join),
                     st.tuples(call, call).map(" ".join), call.map(lambda c: f"```json\n{c}\n```"),
                     call.map(lambda c: c[: len(c) // 2]))


@pytest.mark.slow
@settings(max_examples=PARSE_EXAMPLES, deadline=None)
@given(text=json_protocol_text(), finish_reason=finish)
def test_json_protocol_parses_any_text_without_raising(text: str, finish_reason: str) -> None:
    parsed = JsonProtocol().parse(ProviderReply(text, (), finish_reason), 1)
    assert (parsed.error is None) or not parsed.calls
    for c in parsed.calls:
        assert isinstance(c.arguments, dict) and isinstance(c.name, str) and c.name


@pytest.mark.slow
@settings(max_examples=PARSE_EXAMPLES, deadline=None)
@given(text=st.text(max_size=100) | st.none(), calls=st.lists(st.tuples(st.text(max_size=6), names, raw_arguments),
                                                              max_size=4), finish_reason=finish)
def test_native_protocol_parses_any_tool_calls_without_raising(text: str | None, calls: list[tuple[str, str, str]],
                                                               finish_reason: str) -> None:
    decoded = tuple(decode_tool_call(i, n, raw) for i, n, raw in calls)
    for c in decoded:
        assert (c.arguments is None) == (c.error is not None)
    parsed = NativeProtocol().parse(ProviderReply(text or "", decoded, finish_reason), 3)
    assert len({c.id for c in parsed.calls}) == len(parsed.calls) or any(not i for i, _, _ in calls) or \
        len({i for i, _, _ in calls}) < len(calls)


_DEEP = "[" * 100_000 + "]" * 100_000


def test_deeply_nested_json_in_a_reply_is_a_malformed_reply() -> None:
    text = '{"tool": "read_file", "parameters": ' + _DEEP + ', "terminate": false}'
    assert JsonProtocol().parse(ProviderReply(text, (), "stop"), 1).error is not None
    assert decode_tool_call("c", "read_file", _DEEP).error is not None


# -- whole runs --------------------------------------------------------------------------------------------------

def _validator(tool: str) -> Any:
    spec = Registry.builtin().get(tool)
    return jsonschema.validators.validator_for(spec.parameters)(spec.parameters)


def valid(call: ToolCall) -> bool:
    if call.name not in TOOLS or call.arguments is None:
        return False
    return not list(_validator(call.name).iter_errors(call.arguments))


def native_reply() -> st.SearchStrategy[dict[str, Any]]:
    tool_call = st.one_of(st.fixed_dictionaries({"name": names.filter(bool), "arguments": arguments | raw_arguments}),
                          plausible_calls.map(lambda c: {"name": c[0], "arguments": c[1]}))
    return st.one_of(st.fixed_dictionaries({"text": st.text(max_size=60)}, optional={"finish_reason": finish}),
                     st.fixed_dictionaries({"tool_calls": st.lists(tool_call, min_size=1, max_size=3)},
                                           optional={"text": st.text(max_size=20), "finish_reason": finish}))


def json_reply() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({"raw": json_protocol_text()}, optional={"finish_reason": finish})


def tree(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            p = Path(folder, name)
            st_ = p.lstat()
            out[p.relative_to(root).as_posix()] = p.read_bytes() if stat.S_ISREG(st_.st_mode) else "dir"
    return out


def _note(label: str) -> None:
    """A hypothesis statistics event inside a @given test; nothing outside one."""
    with contextlib.suppress(InvalidArgument):
        event(label)


def check_run(replies: list[dict[str, Any]], protocol: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        parent = Path(tmp)
        ws = parent / "ws"
        ws.mkdir()
        (ws / "a.txt").write_text("a\nb\n")
        (parent / "outside.txt").write_text("outside\n")
        before = tree(ws)
        agent, _ = make_agent(ws, replies, protocol=protocol, yes=True, max_steps=len(replies))
        events: list[Any] = []
        finished = drive(agent.run("fuzz", lambda asked: pytest.fail("no question with --yes")), events.append)
        assert isinstance(events[-1], RunFinished) and events[-1] is finished
        assert sum(isinstance(e, RunFinished) for e in events) == 1
        assert "internal error" not in finished.message, finished.message
        _note(f"stop: {finished.stop_reason.value}")
        assert finished.stop_reason in (StopReason.DONE, StopReason.STEP_LIMIT, StopReason.UNUSABLE,
                                        StopReason.ERROR, StopReason.CHANGE_FAILED), finished
        proposed = {c.id: c for e in events if isinstance(e, ToolCallsProposed) for c in e.calls}
        allowed_paths: set[str] = set()
        for result in (e for e in events if isinstance(e, ToolResult)):
            c = proposed[result.call_id]
            if not valid(c):
                assert not result.envelope.ok and result.change is None, (c, result.envelope)
                _note("an invalid call was refused")
            elif result.change is not None:
                allowed_paths.add(result.change.path)
                _note("a valid change was written")
            elif result.envelope.ok:
                _note("a valid read-only call ran")
        changed = {k for k, v in tree(ws).items() if before.get(k) != v} | (set(before) - set(tree(ws)))
        assert all(any(k == p or p.startswith(k + "/") for p in allowed_paths) or k.startswith(".cli-agent")
                   for k in changed), (changed, allowed_paths)
        assert (parent / "outside.txt").read_text() == "outside\n"
        assert sorted(os.listdir(parent)) == ["outside.txt", "ws"]


@pytest.mark.slow
@settings(max_examples=RUN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies=st.lists(native_reply(), min_size=1, max_size=4))
def test_fuzzed_native_replies_never_crash_the_loop_or_run_invalid_calls(replies: list[dict[str, Any]]) -> None:
    check_run(replies, "native")


@pytest.mark.slow
@settings(max_examples=RUN_EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(replies=st.lists(json_reply(), min_size=1, max_size=4))
def test_fuzzed_json_replies_never_crash_the_loop_or_run_invalid_calls(replies: list[dict[str, Any]]) -> None:
    check_run(replies, "json")


@pytest.mark.parametrize("protocol", ["native", "json"])
def test_a_deeply_nested_reply_does_not_end_the_run_with_an_internal_error(protocol: str) -> None:
    deep = ({"tool_calls": [{"name": "read_file", "arguments": _DEEP}]} if protocol == "native"
            else {"raw": '{"tool": "read_file", "parameters": ' + _DEEP + ', "terminate": false}'})
    check_run([deep, {"text": "done"} if protocol == "native" else {"raw": "done"}], protocol)

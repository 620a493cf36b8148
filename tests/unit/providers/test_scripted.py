from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from cli_agent.contracts.errors import (
    MissingCredentialsError,
    ProviderError,
    RetryableProviderError,
    RunTimeoutError,
    UsageError,
)
from cli_agent.contracts.messages import Message, ToolCall, Usage
from cli_agent.providers import (
    Provider,
    ProviderReply,
    ProviderRequest,
    ScriptedProvider,
    ScriptError,
    make_provider,
)

USER = Message("user", "do it")


def run(provider: ScriptedProvider, *messages: Message, timeout_s: float | None = None) -> list[Any]:
    return list(provider.stream(ProviderRequest(messages or (USER,), timeout_s=timeout_s)))


def test_text_reply_streams_in_a_few_deltas_then_one_reply() -> None:
    provider = ScriptedProvider([{"text": "one two three four five six seven"}])
    out = run(provider)
    deltas, reply = out[:-1], out[-1]
    assert 1 < len(deltas) <= 3 and all(isinstance(d, str) for d in deltas)
    assert "".join(deltas) == "one two three four five six seven"  # type: ignore[arg-type]
    assert reply == ProviderReply("one two three four five six seven", (), "stop", Usage())
    assert isinstance(provider, Provider)


def test_tool_calls_get_ids_decoded_arguments_and_finish_reason() -> None:
    provider = ScriptedProvider([{"text": "let me look", "tool_calls": [
        {"name": "read_file", "arguments": {"path": "a.py"}},
        {"name": "list_files", "arguments": "{not json", "id": "mine"},
        {"name": "search", "arguments": "[1, 2]"},
    ]}])
    reply = run(provider)[-1]
    assert isinstance(reply, ProviderReply)
    assert reply.finish_reason == "tool_calls" and reply.text == "let me look"
    first, second, third = reply.tool_calls
    assert first == ToolCall("call_1", "read_file", {"path": "a.py"}, '{"path": "a.py"}')
    assert second.id == "mine" and second.arguments is None and second.raw_arguments == "{not json"
    assert second.error is not None and "not valid JSON" in second.error
    assert third.arguments is None and third.error is not None and "JSON object" in third.error


def test_raw_reply_is_the_text_exactly_and_usage_and_finish_reason_are_taken() -> None:
    raw = '{"tool": "read_file", "parameters": {"path": "x"},\n  "terminate": false}'
    provider = ScriptedProvider([{"raw": raw, "usage": {"prompt_tokens": 12, "completion_tokens": 3}},
                                 {"text": "cut", "finish_reason": "length"}])
    reply = run(provider)[-1]
    assert reply == ProviderReply(raw, (), "stop", Usage(12, 3))
    assert run(provider)[-1] == ProviderReply("cut", (), "length", Usage())


@pytest.mark.parametrize(("kind", "error"), [
    ("retryable", RetryableProviderError), ("fatal", ProviderError), ("missing_key", MissingCredentialsError)])
def test_error_items_raise_their_error(kind: str, error: type[Exception]) -> None:
    provider = ScriptedProvider([{"error": kind, "message": "boom"}, {"text": "after"}])
    with pytest.raises(error, match="boom") as caught:
        run(provider)
    assert type(caught.value) is error
    assert run(provider)[-1].text == "after"  # type: ignore[union-attr]


def test_delay_within_the_budget_just_waits() -> None:
    start = time.monotonic()
    assert run(ScriptedProvider([{"delay": 0.1, "text": "late"}]), timeout_s=5)[-1].text == "late"  # type: ignore[union-attr]
    assert time.monotonic() - start >= 0.1


def test_delay_past_the_budget_raises_run_timeout_at_the_budget() -> None:
    provider = ScriptedProvider([{"delay": 600, "text": "never"}])
    start = time.monotonic()
    with pytest.raises(RunTimeoutError, match=r"0\.2s"):
        run(provider, timeout_s=0.2)
    assert 0.2 <= time.monotonic() - start < 60  # at the budget, long before the delay ends (even on a loaded machine)


def test_requests_are_recorded_and_exhaustion_is_a_script_error() -> None:
    provider = ScriptedProvider([{"text": "only"}])
    run(provider)
    assert provider.remaining == 0
    with pytest.raises(ScriptError, match="no scripted reply left"):
        run(provider, USER, Message("assistant", "only"), Message("user", "more?"))
    assert len(provider.requests) == 2 and provider.requests[1].messages[-1].content == "more?"


CALL = ToolCall("c1", "read_file", {"path": "a"})
ASK = Message("assistant", None, (CALL, ToolCall("c2", "list_files", {})))


@pytest.mark.parametrize(("messages", "complaint"), [
    ((USER, Message("tool", "x", tool_call_id="c9")), "answers no pending tool call"),
    ((USER, ASK, Message("tool", "x", tool_call_id="c1")), "ends with unanswered tool call"),
    ((USER, ASK, Message("tool", "x", tool_call_id="c1"), Message("user", "hm")), "before tool call"),
    ((USER, ASK, Message("tool", "x", tool_call_id="c1"), Message("tool", "y", tool_call_id="c1")),
     "answers no pending"),
    ((USER, Message("assistant", None, (CALL, CALL))), "not unique"),
    ((), "no messages"),
])
def test_broken_conversations_are_script_errors(messages: tuple[Message, ...], complaint: str) -> None:
    provider = ScriptedProvider([{"text": "unused"}])
    with pytest.raises(ScriptError, match=complaint):
        list(provider.stream(ProviderRequest(messages)))
    assert provider.remaining == 1


def test_a_well_formed_tool_round_trip_passes() -> None:
    answered = (USER, ASK, Message("tool", "x", tool_call_id="c1", name="read_file"),
                Message("tool", "y", tool_call_id="c2"), Message("assistant", "done"), Message("user", "thanks"))
    assert run(ScriptedProvider([{"text": "ok"}]), *answered)[-1].text == "ok"  # type: ignore[union-attr]


def test_from_file_takes_a_list_or_an_object(tmp_path: Path) -> None:
    listed = tmp_path / "list.json"
    listed.write_text(json.dumps([{"text": "a"}]))
    wrapped = tmp_path / "object.json"
    wrapped.write_text(json.dumps({"replies": [{"text": "b"}], "native_tools": False, "context_window": 4096}))
    assert run(ScriptedProvider.from_file(listed))[-1].text == "a"  # type: ignore[union-attr]
    provider = make_provider(f"scripted:{wrapped}", api_base=None, api_key=None)
    assert isinstance(provider, ScriptedProvider) and provider.name == f"scripted:{wrapped}"
    assert not provider.supports_native_tools() and provider.context_window() == 4096


@pytest.mark.parametrize(("content", "complaint"), [
    (None, "cannot read script"),
    ("{nope", "not valid JSON"),
    ('"text"', "must be a JSON list"),
    ('{"replies": [], "extra": 1}', "unknown key"),
    ('[{"txt": "typo"}]', "reply 0: unknown key"),
    ('[{"error": "sometimes"}]', "error must be one of"),
    ('[{"delay": -1}]', "delay must be"),
    ('[{"tool_calls": [{"arguments": {}}]}]', "tool_calls must be"),
    ("[3]", "must be an object"),
])
def test_bad_script_files_are_one_line_usage_errors(tmp_path: Path, content: str | None, complaint: str) -> None:
    path = tmp_path / "script.json"
    if content is not None:
        path.write_text(content)
    with pytest.raises(UsageError, match=complaint) as caught:
        ScriptedProvider.from_file(path)
    assert str(path) in str(caught.value) and "\n" not in str(caught.value)


# -- one script format for both fakes ------------------------------------------------------------------------------

@pytest.mark.parametrize(("item", "error"), [
    ({"status": 429}, RetryableProviderError), ({"status": 503}, RetryableProviderError),
    ({"status": 401}, MissingCredentialsError), ({"status": 404}, ProviderError), ({"close": True},
                                                                                   RetryableProviderError),
    ({"error": "retryable"}, RetryableProviderError), ({"error": "missing_key"}, MissingCredentialsError),
    ({"error": "fatal"}, ProviderError)])
def test_one_script_fails_the_same_way_in_process_and_over_http(item: dict, error: type[Exception]) -> None:
    from cli_agent.providers import OpenAIHTTPProvider
    from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

    with pytest.raises(error):
        run(ScriptedProvider([item]))
    with FakeOpenAIServer([item]) as server:
        provider = OpenAIHTTPProvider("openai/fake", api_base=server.url, api_key="sk-test")
        try:
            with pytest.raises(error):
                list(provider.stream(ProviderRequest((USER,))))
        finally:
            provider.close()


def test_chunks_fix_the_deltas_in_process_too() -> None:
    out = run(ScriptedProvider([{"text": "Hello world", "chunks": ["Hel", "lo", " world"]}]))
    assert out[:-1] == ["Hel", "lo", " world"] and isinstance(out[-1], ProviderReply)


@pytest.mark.parametrize("item", [{"status": 200}, {"chunks": "abc"}, {"headers": []}, {"chunk_delay": -1}])
def test_a_bad_item_is_refused_by_both_fakes(item: dict) -> None:
    from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

    with pytest.raises(UsageError):
        ScriptedProvider([item])
    with pytest.raises(UsageError):
        FakeOpenAIServer([item])

"""Both real transports (plain httpx, LiteLLM) against the loopback FakeOpenAIServer: the same behaviour, and
the same ProviderReply values and requests for the same scripted conversations."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from cli_agent.contracts.errors import RetryableProviderError, RunTimeoutError
from cli_agent.contracts.messages import Message, ToolCall
from cli_agent.providers import LiteLLMProvider, OpenAIHTTPProvider, Provider, ProviderReply, ProviderRequest
from cli_agent.providers.litellm_provider import LITELLM_QUIETED_WARNINGS
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

TOOLS = ({"type": "function", "function": {"name": "read_file", "description": "Read a file.",
                                           "parameters": {"type": "object", "properties": {
                                               "path": {"type": "string"}}, "required": ["path"]}}},)
Connect = Callable[[str], Provider]
ASK = ProviderRequest((Message("system", "be brief"), Message("user", "hi")), tools=TOOLS)


@pytest.fixture
def connect(kind: str) -> Iterator[Connect]:
    """Opens a provider of the transport under test; closes them all at teardown."""
    opened: list[Provider] = []

    def open_provider(url: str) -> Provider:
        provider: Provider = (OpenAIHTTPProvider("openai/fake-model", api_base=url) if kind == "http"
                              else LiteLLMProvider("openai/fake-model", api_base=url))
        opened.append(provider)
        return provider

    yield open_provider
    for provider in opened:
        provider.close()


def LITELLM_QUIET(test: Any) -> Any:
    for message in LITELLM_QUIETED_WARNINGS:
        test = pytest.mark.filterwarnings(f"ignore:{message}")(test)
    return test


LITELLM = pytest.param("litellm", marks=[pytest.mark.filterwarnings(f"ignore:{m}")
                                          for m in LITELLM_QUIETED_WARNINGS])


@pytest.fixture(params=["http", LITELLM])
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture(autouse=True)
def settled_threads() -> Iterator[None]:
    """Each test ends with the threads it started (abandoned stream readers, LiteLLM's failure loggers): on
    Python 3.11 a traceback formatted in a stray thread can race pytest's own AST parsing."""
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 3
    for thread in set(threading.enumerate()) - before:
        if not thread.name.startswith("litellm-logging"):  # LiteLLM's idle pool workers never end
            thread.join(max(0.0, deadline - time.monotonic()))


@pytest.fixture
def server() -> Iterator[FakeOpenAIServer]:
    with FakeOpenAIServer() as fake:
        yield fake


def collect(provider: Provider, request: ProviderRequest = ASK) -> tuple[list[str], ProviderReply]:
    out = list(provider.stream(request))
    assert isinstance(out[-1], ProviderReply) and all(isinstance(d, str) for d in out[:-1])
    return out[:-1], out[-1]  # type: ignore[return-value]


def closed_port_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


def test_text_deltas_arrive_in_order(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"text": "Hello world", "chunks": ["Hel", "lo", " wor", "ld"]})
    deltas, reply = collect(connect(server.url))
    assert deltas == ["Hel", "lo", " wor", "ld"]
    assert (reply.text, reply.tool_calls, reply.finish_reason) == ("Hello world", (), "stop")
    assert reply.usage.prompt_tokens > 0 and reply.usage.completion_tokens > 0
    body = server.requests[0]
    assert body["model"] == "fake-model" and body["stream"] is True and body["tools"] == list(TOOLS)
    assert body["messages"] == [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}]


def test_two_tool_calls_in_one_turn_are_assembled_from_fragments(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"text": "Reading both.", "tool_calls": [
        {"id": "call_a", "name": "read_file", "arguments": {"path": "src/long_module_name.py"}},
        {"id": "call_b", "name": "read_file", "arguments": {"path": "README.md", "start_line": 2}}]})
    _, reply = collect(connect(server.url))
    assert reply.finish_reason == "tool_calls" and reply.text == "Reading both."
    assert [(c.id, c.name, c.arguments, c.error) for c in reply.tool_calls] == [
        ("call_a", "read_file", {"path": "src/long_module_name.py"}, None),
        ("call_b", "read_file", {"path": "README.md", "start_line": 2}, None)]


def test_non_json_tool_arguments_become_a_call_with_an_error(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"tool_calls": [{"id": "call_x", "name": "read_file", "arguments": "{'path': 'a.py'"}]})
    _, reply = collect(connect(server.url))
    (call,) = reply.tool_calls
    assert call.arguments is None and call.raw_arguments == "{'path': 'a.py'"
    assert call.error is not None and "not valid JSON" in call.error


@pytest.mark.parametrize("status", [429, 500, 503])
def test_rate_limits_and_server_errors_are_retryable(connect: Connect, server: FakeOpenAIServer, status: int) -> None:
    server.push({"status": status, "headers": {"Retry-After": "1"}, "message": "try later"})
    with pytest.raises(RetryableProviderError, match="try later") as caught:
        collect(connect(server.url))
    assert server.url in str(caught.value) and "\n" not in str(caught.value)


def test_connection_refused_is_retryable_and_names_the_url(connect: Connect) -> None:
    url = closed_port_url()
    start = time.monotonic()
    with pytest.raises(RetryableProviderError, match="could not connect") as caught:
        collect(connect(url))
    assert url in str(caught.value) and "\n" not in str(caught.value)
    assert time.monotonic() - start < 2  # no hidden retries with backoff


def test_a_dropped_connection_is_retryable(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"close": True})
    with pytest.raises(RetryableProviderError):
        collect(connect(server.url))


def test_a_slow_reply_raises_run_timeout_when_the_budget_ends(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"delay": 300, "text": "too late"})
    provider = connect(server.url)
    start = time.monotonic()
    with pytest.raises(RunTimeoutError, match=r"0\.3s"):
        collect(provider, ProviderRequest(ASK.messages, timeout_s=0.3))
    assert 0.25 <= time.monotonic() - start < 60  # generous for a loaded machine; the reply would take 300 s


def test_a_trickling_stream_cannot_outlast_the_budget(connect: Connect, server: FakeOpenAIServer) -> None:
    provider = connect(server.url)
    server.push({"text": "warm"})  # a first request loads what the transport loads (litellm: 2 s), outside the budget
    collect(provider, ProviderRequest(ASK.messages, timeout_s=30))
    server.push({"text": " ".join("abcdefgh" * 10), "chunk_delay": 0.4})  # each read is quick, the whole takes 32 s
    start, seen = time.monotonic(), []
    with pytest.raises(RunTimeoutError):
        for item in provider.stream(ProviderRequest(ASK.messages, timeout_s=0.5)):
            seen.append(item)
    assert 0.45 <= time.monotonic() - start < 20  # generous for a loaded machine, and far short of the whole
    assert seen and all(isinstance(s, str) for s in seen)


def test_a_reply_within_the_budget_is_unaffected(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"delay": 0.05, "text": "in time", "chunk_delay": 0.01})
    _, reply = collect(connect(server.url), ProviderRequest(ASK.messages, timeout_s=5))
    assert reply.text == "in time"


def test_options_reach_the_server(connect: Connect, server: FakeOpenAIServer) -> None:
    server.push({"text": "ok"})
    request = ProviderRequest(ASK.messages, tools=TOOLS, options={"temperature": 0, "tool_choice": "auto"})
    collect(connect(server.url), request)
    assert server.requests[0]["temperature"] == 0 and server.requests[0]["tool_choice"] == "auto"


def test_a_local_server_gets_a_dummy_key_when_none_is_given(
        connect: Connect, server: FakeOpenAIServer, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.push({"text": "ok"})
    collect(connect(server.url))
    assert server.headers[0]["authorization"].startswith("Bearer sk-")


# -- the contract: both transports agree -------------------------------------------------------------------------

TWO_TOOLS = tuple({"type": "function", "function": {"name": name, "description": f"{name} tool",
                                                    "parameters": {"type": "object", "properties": {
                                                        "path": {"type": "string"}}}}}
                  for name in ("read_file", "list_files"))
CALLS = (ToolCall("call_1", "read_file", {"path": "a.py"}), ToolCall("call_2", "list_files", {}))
AFTER_TWO_TOOLS = (Message("system", "You are terse."), Message("user", "look at a.py"),
               Message("assistant", "Looking.", CALLS),
               Message("tool", '{"ok": true, "data": "print(1)"}', tool_call_id="call_1", name="read_file"),
               Message("tool", '{"ok": true, "data": ["a.py"]}', tool_call_id="call_2", name="list_files"),
               Message("user", "and now?"))
FIRST = (Message("system", "You are terse."), Message("user", "look at a.py"))

AGREEMENT_CASES: list[tuple[str, dict[str, Any], ProviderRequest]] = [
    ("after tool results", {"text": "a.py prints 1."}, ProviderRequest(AFTER_TWO_TOOLS, TWO_TOOLS)),
    ("json protocol, no tools", {"text": '{"tool": "read_file", "parameters": {"path": "a.py"}}'},
     ProviderRequest(FIRST)),
    ("length", {"text": "cut sh", "finish_reason": "length"}, ProviderRequest(FIRST, options={"max_tokens": 3})),
    ("not streamed", {"text": "whole", "tool_calls": [{"id": "c", "name": "list_files", "arguments": {}}]},
     ProviderRequest(FIRST, TWO_TOOLS, stream=False)),
]


def play(provider: Provider, request: ProviderRequest) -> tuple[str, ProviderReply]:
    out = list(provider.stream(request))
    provider.close()
    reply = out[-1]
    assert isinstance(reply, ProviderReply)
    return "".join(str(d) for d in out[:-1]), reply


@LITELLM_QUIET
@pytest.mark.parametrize(("item", "request_"), [c[1:] for c in AGREEMENT_CASES],
                         ids=[c[0] for c in AGREEMENT_CASES])
def test_both_transports_agree(item: dict[str, Any], request_: ProviderRequest) -> None:
    with FakeOpenAIServer([item, item]) as server:
        http_text, http = play(OpenAIHTTPProvider("openai/fake-model", api_base=server.url), request_)
        lite_text, lite = play(LiteLLMProvider("openai/fake-model", api_base=server.url), request_)
        sent_by_http, sent_by_litellm = server.requests
    assert (http.text, http.tool_calls, http.finish_reason) == (lite.text, lite.tool_calls, lite.finish_reason)
    assert http_text == lite_text == http.text
    assert (http.usage.prompt_tokens, http.usage.completion_tokens) == (
        lite.usage.prompt_tokens, lite.usage.completion_tokens)
    for key in ("model", "messages", "tools", "max_tokens"):
        assert sent_by_http.get(key) == sent_by_litellm.get(key), key
    assert bool(sent_by_http.get("stream")) == bool(sent_by_litellm.get("stream")) == request_.stream

"""The contract: the same scripted conversations through both transports give the same ProviderReply values, and
the loopback server receives the same conversation from both."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from cli_agent.messages import Message, ToolCall
from cli_agent.providers import LiteLLMProvider, OpenAIHTTPProvider, Provider, ProviderReply, ProviderRequest
from cli_agent.providers.litellm_provider import LITELLM_QUIETED_WARNINGS
from cli_agent.testing import FakeOpenAIServer

pytestmark = [pytest.mark.filterwarnings(f"ignore:{m}") for m in LITELLM_QUIETED_WARNINGS]

TOOLS = tuple({"type": "function", "function": {"name": name, "description": f"{name} tool",
                                                "parameters": {"type": "object", "properties": {
                                                    "path": {"type": "string"}}}}}
              for name in ("read_file", "list_files"))
CALLS = (ToolCall("call_1", "read_file", {"path": "a.py"}), ToolCall("call_2", "list_files", {}))
AFTER_TOOLS = (Message("system", "You are terse."), Message("user", "look at a.py"),
               Message("assistant", "Looking.", CALLS),
               Message("tool", '{"ok": true, "data": "print(1)"}', tool_call_id="call_1", name="read_file"),
               Message("tool", '{"ok": true, "data": ["a.py"]}', tool_call_id="call_2", name="list_files"),
               Message("user", "and now?"))
FIRST = (Message("system", "You are terse."), Message("user", "look at a.py"))

CASES: list[tuple[str, dict[str, Any], ProviderRequest]] = [
    ("plain text", {"text": "Just an answer, no tools."}, ProviderRequest(FIRST, TOOLS)),
    ("two calls", {"text": "Looking.", "tool_calls": [
        {"id": "call_1", "name": "read_file", "arguments": {"path": "a.py"}},
        {"id": "call_2", "name": "list_files", "arguments": {}}]}, ProviderRequest(FIRST, TOOLS)),
    ("after tool results", {"text": "a.py prints 1."}, ProviderRequest(AFTER_TOOLS, TOOLS)),
    ("broken arguments", {"tool_calls": [{"id": "call_9", "name": "read_file", "arguments": '{"path": '}]},
     ProviderRequest(FIRST, TOOLS)),
    ("json protocol, no tools", {"text": '{"tool": "read_file", "parameters": {"path": "a.py"}}'},
     ProviderRequest(FIRST)),
    ("length", {"text": "cut sh", "finish_reason": "length"}, ProviderRequest(FIRST, options={"max_tokens": 3})),
    ("not streamed", {"text": "whole", "tool_calls": [{"id": "c", "name": "list_files", "arguments": {}}]},
     ProviderRequest(FIRST, TOOLS, stream=False)),
]


@pytest.fixture(autouse=True)
def settled_threads() -> Iterator[None]:
    before = set(threading.enumerate())
    yield
    deadline = time.monotonic() + 3
    for thread in set(threading.enumerate()) - before:
        if not thread.name.startswith("litellm-logging"):
            thread.join(max(0.0, deadline - time.monotonic()))


def play(provider: Provider, request: ProviderRequest) -> tuple[str, ProviderReply]:
    out = list(provider.stream(request))
    provider.close()
    reply = out[-1]
    assert isinstance(reply, ProviderReply)
    return "".join(str(d) for d in out[:-1]), reply


@pytest.mark.parametrize(("item", "request_"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
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

"""A flat per-step cost: each message is encoded once (the bytes sent are the request's JSON, exactly), one HTTP
connection is kept for the session, and requests reuse the provider's worker thread instead of starting one each."""

from __future__ import annotations

import json
import threading

from cli_agent.contracts.messages import Message, ToolCall
from cli_agent.providers.base import ProviderRequest
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer
from cli_agent.providers.openai_http import OpenAIHTTPProvider


def conversation() -> tuple[Message, ...]:
    call = ToolCall("c1", "read_file", {"path": "é.txt"}, '{"path": "é.txt"}')
    return (Message("system", "be brief"), Message("user", "lis «ça» \u2028 please"),
            Message("assistant", None, tool_calls=(call,)),
            Message("tool", '{"ok": true, "data": "x\\ny"}', tool_call_id="c1", name="read_file"))


def test_the_bytes_sent_are_the_request_body_and_each_message_is_encoded_once() -> None:
    provider = OpenAIHTTPProvider("openai/m", api_base="http://127.0.0.1:9/v1")
    request = ProviderRequest(conversation(), tools=({"type": "function", "function": {"name": "f"}},),
                              options={"temperature": 0})
    assert json.loads(provider.encoded_body(request)) == provider.request_body(request)
    first = [m.openai_json for m in request.messages]
    assert all(a is m.openai_json for a, m in zip(first, request.messages, strict=True))  # cached, not redone


def test_a_session_keeps_one_connection_and_one_worker_thread() -> None:
    with FakeOpenAIServer(instant="fine") as server:
        provider = OpenAIHTTPProvider("openai/m", api_base=server.url)
        messages: tuple[Message, ...] = (Message("user", "hi"),)
        before = workers()
        for _ in range(5):
            reply = list(provider.stream(ProviderRequest(messages, timeout_s=30)))[-1]
            messages += (Message("assistant", reply.text), Message("user", "again"))  # type: ignore[union-attr]
        threads = workers() - before
        client = provider._http()
        pool = client._transport._pool  # type: ignore[attr-defined]
        assert len(pool.connections) == 1  # keep-alive: every request on the same connection
        provider.close()
    assert threads <= 1  # at most one worker, kept for the next request


def workers() -> int:
    return sum(t.name == "provider-stream" for t in threading.enumerate())

"""Never over the model's context: a request is fitted to it before it is sent (older tool results, then the middle
of long messages, left out with a note the model sees), and a server's "over the context" error is answered by
fitting tighter and sending once more. Against a loopback server that enforces a context size as llama.cpp's does."""

from __future__ import annotations

import pytest

from cli_agent.contracts import Message, ProviderError
from cli_agent.contracts.messages import ToolCall
from cli_agent.providers import ProviderReply, ProviderRequest
from cli_agent.providers.context_fit import estimated_tokens, fitted, over_context
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer
from cli_agent.providers.openai_http import OpenAIHTTPProvider

CONTEXT = 2048


def conversation(reads: int = 4, chars: int = 6000) -> tuple[Message, ...]:
    """A run that read a few long files: the system prompt, the task, then a read and its result each."""
    messages = [Message("system", "You are a coding agent."), Message("user", "Fix mean() in stats.py")]
    for n in range(reads):
        call = ToolCall(id=f"c{n}", name="read_file", arguments={"path": f"f{n}.py"})
        messages += [Message("assistant", "", tool_calls=(call,)),
                     Message("tool", f"# file {n}\n" + "x = 1\n" * (chars // 6), tool_call_id=f"c{n}")]
    return tuple(messages)


def reply(provider: OpenAIHTTPProvider, messages: tuple[Message, ...]) -> ProviderReply:
    try:
        out = list(provider.stream(ProviderRequest(messages, options={"max_tokens": 256})))
    finally:
        provider.close()
    final = out[-1]
    assert isinstance(final, ProviderReply)
    return final


def test_a_request_is_fitted_to_the_models_context_before_it_is_sent() -> None:
    messages = conversation()
    assert estimated_tokens(messages) > CONTEXT
    with FakeOpenAIServer([{"text": "ok"}], context_size=CONTEXT) as server:
        provider = OpenAIHTTPProvider("openai/local", api_base=server.url, context_window=CONTEXT)
        assert reply(provider, messages).text == "ok"
        assert server.refused == []  # fitted before it was sent: never refused
        sent = server.requests[0]["messages"]
    assert len(sent) == len(messages)  # every message is still there, every call still answered
    assert sent[0]["content"] == "You are a coding agent." and sent[1]["content"] == "Fix mean() in stats.py"
    assert "left out to fit the model's context]" in sent[3]["content"]  # the oldest read, for a note
    assert sent[-1]["content"].startswith("# file 3")  # the newest result is kept (cut in its middle if need be)


def test_a_context_error_from_the_server_is_answered_by_fitting_and_retrying_once() -> None:
    messages = conversation()
    with FakeOpenAIServer([{"text": "fitted"}], context_size=CONTEXT) as server:
        provider = OpenAIHTTPProvider("openai/other", api_base=server.url)  # its context is not known here
        assert reply(provider, messages).text == "fitted"
        assert len(server.refused) == 1 and server.refused[0] > CONTEXT and len(server.requests) == 1
    with FakeOpenAIServer([], context_size=10) as server, pytest.raises(ProviderError, match="context size"):
        reply(OpenAIHTTPProvider("openai/other", api_base=server.url), messages)  # still over: said, not looped


def test_a_request_within_the_context_is_sent_as_it_is_and_the_errors_are_read() -> None:
    small = conversation(reads=1, chars=300)
    assert fitted(small, 0, CONTEXT, 256) == (small, 0)
    assert over_context("request (9685 tokens) exceeds the available context size (8192 tokens)") == \
        pytest.approx(8192 / 9685 * 0.9)
    assert over_context("This model's maximum context length is 8192 tokens") == 0.75
    assert over_context("rate limited") is None

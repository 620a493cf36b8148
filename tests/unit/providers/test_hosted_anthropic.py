"""LiteLLM against a loopback Anthropic Messages server over SSE: cache breakpoints in the request bodies, the cached
tokens and their price, the reasoning effort, thinking streamed apart and signed thinking blocks sent back."""

from __future__ import annotations

import pytest

from cli_agent.contracts.images import ImagePart
from cli_agent.contracts.messages import Message, Usage
from cli_agent.providers import LiteLLMProvider, ProviderReply, ProviderRequest
from cli_agent.providers.base import Thinking
from cli_agent.providers.cache_marks import MAX_BREAKPOINTS
from cli_agent.providers.litellm_provider import LITELLM_QUIETED_WARNINGS, preload, price
from cli_agent.providers.loopback.fake_anthropic import FakeAnthropicServer

pytestmark = [pytest.mark.filterwarnings(f"ignore:{m}") for m in LITELLM_QUIETED_WARNINGS]

CLAUDE = "anthropic/claude-sonnet-4-5"
SYSTEM = Message("system", "You are a careful coding agent. " * 300)  # past the 1,024 tokens Anthropic caches
PATH = {"type": "object", "properties": {"path": {"type": "string"}}}
TOOLS = ({"type": "function", "function": {"name": "read_file", "description": "Read a file.", "parameters": PATH}},)
READ = {"name": "read_file", "arguments": {"path": "a.py"}}


def marks(body: dict) -> list[str]:
    """Where a request body carries cache_control: "tools", "system", or the role of each marked message block."""
    found = ["tools" for tool in body.get("tools") or () if tool.get("cache_control")]
    found += ["system" for block in body.get("system") or () if isinstance(block, dict) and block.get("cache_control")]
    for message in body["messages"]:
        content = message["content"] if isinstance(message["content"], list) else []
        found += [f"{message['role']}:{block['type']}" for block in content if block.get("cache_control")]
    return found


def ask(provider: LiteLLMProvider, messages: list[Message]) -> tuple[ProviderReply, list[str]]:
    items = list(provider.stream(ProviderRequest(tuple(messages), tools=TOOLS)))
    reply = items[-1]
    assert isinstance(reply, ProviderReply)
    return reply, [i.text for i in items if isinstance(i, Thinking)]


def test_breakpoints_move_with_the_conversation_and_the_cache_is_read_back_and_priced() -> None:
    with FakeAnthropicServer([{"tool_calls": [READ]}, {"tool_calls": [READ]}, {"text": "done"}]) as server:
        provider = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k")
        history = [SYSTEM, Message("user", "fix a.py")]
        replies = []
        for _ in range(3):
            reply, _ = ask(provider, history)
            replies.append(reply)
            if reply.tool_calls:
                call = reply.tool_calls[0]
                history += [Message("assistant", None, tool_calls=reply.tool_calls),
                            Message("tool", "x = 1\n" * 50, tool_call_id=call.id, name="read_file")]
        bodies = server.requests
    assert marks(bodies[0]) == ["system", "user:text"]
    assert marks(bodies[1]) == ["system", "user:text", "user:tool_result"]  # the turn before, and the newest
    assert marks(bodies[2]) == ["system", "user:tool_result", "user:tool_result"]
    assert all(len(marks(b)) <= MAX_BREAKPOINTS for b in bodies)
    first, second, third = (r.usage for r in replies)
    assert first.cached_tokens == 0 and first.cache_write_tokens == first.prompt_tokens
    assert second.cached_tokens == first.prompt_tokens and 0 < second.cache_write_tokens < second.prompt_tokens
    assert third.cached_tokens == second.prompt_tokens
    uncached = price(preload(), CLAUDE, Usage(third.prompt_tokens, third.completion_tokens))
    assert third.cost_usd == pytest.approx(price(preload(), CLAUDE, third)) and third.cost_usd < uncached / 3


def test_cache_false_sends_no_breakpoint_and_nothing_is_cached() -> None:
    with FakeAnthropicServer([{"text": "one"}, {"text": "two"}]) as server:
        provider = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k", cache=False)
        history = [SYSTEM, Message("user", "hi")]
        first, _ = ask(provider, history)
        second, _ = ask(provider, [*history, Message("assistant", "one"), Message("user", "again")])
    assert [marks(b) for b in server.requests] == [[], []]
    assert first.usage.cached_tokens == second.usage.cached_tokens == 0


def test_the_tools_carry_the_breakpoint_when_there_is_no_system_prompt() -> None:
    with FakeAnthropicServer([{"text": "ok"}]) as server:
        ask(LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k"), [Message("user", "hi")])
    assert marks(server.requests[0]) == ["tools"]


def test_thinking_streams_apart_and_its_signed_block_goes_back_unchanged_with_the_results() -> None:
    thought = "The test imports a.py, so read it before changing anything."
    with FakeAnthropicServer([{"thinking": thought, "tool_calls": [READ]}, {"text": "fixed"}]) as server:
        provider = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k", reasoning_effort="high")
        history = [SYSTEM, Message("user", "fix a.py")]
        reply, pieces = ask(provider, history)
        assert "".join(pieces) == thought == reply.thinking
        assert reply.text == "" and len(reply.thinking_blocks) == 1
        call = reply.tool_calls[0]
        history += [Message("assistant", None, tool_calls=reply.tool_calls, thinking_blocks=reply.thinking_blocks),
                    Message("tool", "x = 1", tool_call_id=call.id, name="read_file")]
        final, _ = ask(provider, history)
        first, second = server.requests
    assert final.text == "fixed"
    assert first["thinking"]["type"] == "enabled" and first["thinking"]["budget_tokens"] > 0  # high, as LiteLLM maps it
    sent = second["messages"][1]["content"]
    assert sent[0] == {"type": "thinking", "thinking": thought, "signature": reply.thinking_blocks[0]["signature"]}
    assert sent[1]["type"] == "tool_use"


def test_a_changed_thinking_block_is_refused_as_anthropic_refuses_it() -> None:
    with FakeAnthropicServer([{"thinking": "plan", "tool_calls": [READ]}]) as server:
        provider = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k")
        reply, _ = ask(provider, [SYSTEM, Message("user", "go")])
        forged = ({**reply.thinking_blocks[0], "thinking": "another plan"},)
        history = [SYSTEM, Message("user", "go"),
                   Message("assistant", None, tool_calls=reply.tool_calls, thinking_blocks=forged),
                   Message("tool", "x", tool_call_id=reply.tool_calls[0].id, name="read_file")]
        with pytest.raises(Exception, match="signature"):
            ask(provider, history)


def test_thinking_goes_without_a_temperature_which_anthropic_refuses_with_it() -> None:
    with FakeAnthropicServer([{"thinking": "hm", "text": "ok"}, {"text": "ok"}]) as server:
        thinking = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k", reasoning_effort="low")
        list(thinking.stream(ProviderRequest((Message("user", "hi"),), options={"temperature": 0.7})))
        plain = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k")
        list(plain.stream(ProviderRequest((Message("user", "hi"),), options={"temperature": 0.7})))
    assert "temperature" not in server.requests[0] and server.requests[0]["thinking"]["type"] == "enabled"
    assert server.requests[1]["temperature"] == 0.7 and "thinking" not in server.requests[1]


def test_a_model_without_reasoning_gets_a_note_and_no_effort() -> None:
    plain = LiteLLMProvider("openai/gpt-4o-mini", reasoning_effort="high")
    assert plain.notes() == ["openai/gpt-4o-mini takes no reasoning effort (LiteLLM says it does not reason): "
                             "reasoning_effort = 'high' is not sent"]
    assert LiteLLMProvider(CLAUDE, reasoning_effort="high").notes() == []
    assert LiteLLMProvider("openai/my-own-model", reasoning_effort="low").notes() == []  # unknown: the server decides


def test_what_litellm_says_of_vision() -> None:
    assert LiteLLMProvider("deepseek/deepseek-chat").supports_images() is False
    assert LiteLLMProvider(CLAUDE).supports_images() is True
    assert LiteLLMProvider("openai/my-own-model").supports_images() is True  # unknown: the server decides


def test_an_image_goes_to_a_vision_model_as_an_image_block() -> None:
    png = (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x02\x00\x00\x00\x03\x08\x06\x00\x00\x00"
           b"\x00\x00\x00\x00")
    image = ImagePart("shot.png", "image/png", 2, 3, png)
    with FakeAnthropicServer([{"text": "a red square"}]) as server:
        provider = LiteLLMProvider(CLAUDE, api_base=server.url, api_key="k")
        list(provider.stream(ProviderRequest((Message("user", "what is this?", images=(image,)),))))
    content = server.requests[0]["messages"][0]["content"]
    assert content[0]["text"] == "what is this?"
    assert content[1]["type"] == "image" and content[1]["source"]["media_type"] == "image/png"


@pytest.mark.parametrize("route", ["http", "litellm"])
def test_reasoning_content_from_an_openai_compatible_server_streams_as_thinking(route: str) -> None:
    from cli_agent.providers import OpenAIHTTPProvider
    from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

    usage = {"prompt_tokens": 900, "completion_tokens": 20, "prompt_tokens_details": {"cached_tokens": 768}}
    with FakeOpenAIServer([{"thinking": "two cases to check", "text": "the answer", "usage": usage}]) as server:
        provider = (OpenAIHTTPProvider("openai/deepseek-reasoner", api_base=server.url, reasoning_effort="medium")
                    if route == "http" else LiteLLMProvider("deepseek/deepseek-reasoner", api_base=server.url,
                                                            api_key="k", reasoning_effort="medium"))
        items = list(provider.stream(ProviderRequest((Message("user", "think"),))))
        provider.close()
        body = server.requests[0]
    reply = items[-1]
    assert isinstance(reply, ProviderReply)
    assert "".join(i.text for i in items if isinstance(i, Thinking)) == "two cases to check" == reply.thinking
    assert "".join(i for i in items if isinstance(i, str)) == "the answer" == reply.text  # never part of the answer
    if route == "http":
        assert body["reasoning_effort"] == "medium"
    else:  # as LiteLLM maps the effort for DeepSeek
        assert body["thinking"] == {"type": "enabled"}
    assert reply.usage.cached_tokens == 768  # OpenAI's prompt_tokens_details.cached_tokens

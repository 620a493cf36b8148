"""Where Anthropic's cache breakpoints go on a chat-completions request, and which models take them."""

from __future__ import annotations

import pytest

from cli_agent.providers.cache_marks import EPHEMERAL, MAX_BREAKPOINTS, breakpoints, takes_breakpoints

TOOLS = [{"type": "function", "function": {"name": "a"}}, {"type": "function", "function": {"name": "b"}}]


def marked(messages, tools=None):
    out, tools_out = breakpoints(messages, tools)
    where = [n for n, m in enumerate(out) if m.get("cache_control") or (
        isinstance(m.get("content"), list) and any(p.get("cache_control") for p in m["content"]))]
    return where, [n for n, t in enumerate(tools_out or ()) if t.get("cache_control")]


@pytest.mark.parametrize(("provider", "model", "takes"), [
    ("anthropic", "anthropic/claude-sonnet-4-5", True), ("bedrock", "bedrock/anthropic.claude-3-5-sonnet", True),
    ("vertex_ai", "vertex_ai/claude-sonnet-4@20250514", True), ("bedrock", "bedrock/amazon.nova-pro", False),
    ("openai", "openai/gpt-4o", False), ("deepseek", "deepseek/deepseek-chat", False), ("gemini", "gemini/x", False),
])
def test_which_models_take_breakpoints(provider, model, takes):
    assert takes_breakpoints(provider, model) is takes


def test_a_long_conversation_has_three_breakpoints_that_move():
    history = [{"role": "system", "content": "sys"}, {"role": "user", "content": "task"}]
    for n in range(6):
        history += [{"role": "assistant", "content": None, "tool_calls": [{"id": f"c{n}"}]},
                    {"role": "tool", "content": "result", "tool_call_id": f"c{n}"}]
        where, tools = marked(history, TOOLS)
        assert where == [0, len(history) - 3, len(history) - 1] and tools == []
        assert len(where) + len(tools) <= MAX_BREAKPOINTS


def test_without_a_system_prompt_the_last_tool_is_marked_and_the_inputs_are_left_alone():
    messages = [{"role": "user", "content": "hi"}]
    out, tools = breakpoints(messages, TOOLS)
    assert tools is not None and tools[-1]["cache_control"] == EPHEMERAL and "cache_control" not in TOOLS[-1]
    assert messages == [{"role": "user", "content": "hi"}] and out[0] == messages[0]  # a lone message: no mark


def test_an_empty_text_is_never_marked():
    out, _ = breakpoints([{"role": "system", "content": "s"}, {"role": "user", "content": ""}], None)
    assert out[1] == {"role": "user", "content": ""}

"""Anthropic prompt-cache breakpoints (`cache_control: ephemeral`) on a chat-completions request, as LiteLLM passes
them on to Anthropic, Bedrock and Vertex Claude.

A session's request is the last one plus the reply and its results, so the breakpoints go where it gains most:
the system prompt (Anthropic caches the tool definitions before it, so both are read back at a tenth of the price),
the newest message (what this request writes to the cache), and the newest message of the request before (the
prefix it wrote, read back now). They move as the conversation grows; never more than Anthropic's four.
OpenAI, DeepSeek and Gemini cache a stable prefix on their own: they get no marks, and the prefix is kept stable by
the plan being built once a run and the history sent as it was.
"""

from __future__ import annotations

from typing import Any

EPHEMERAL = {"type": "ephemeral"}
MAX_BREAKPOINTS = 4  # Anthropic refuses a request with more
_CLAUDE_HOSTS = ("bedrock", "bedrock_converse", "vertex_ai", "vertex_ai_beta")


def takes_breakpoints(provider: str, model: str) -> bool:
    """Whether LiteLLM's provider `provider` serving `model` reads Anthropic's cache breakpoints."""
    return provider == "anthropic" or (provider in _CLAUDE_HOSTS and "claude" in model.lower())


def breakpoints(messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
                ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
    """The messages and tools with the breakpoints marked (copies where marked; the inputs are left alone)."""
    out = list(messages)
    marked: list[int] = []
    if out and out[0].get("role") == "system":
        marked.append(0)
    elif tools:
        tools = [*tools[:-1], {**tools[-1], "cache_control": EPHEMERAL}]
    last = len(out) - 1
    if last > 0:
        marked.append(last)
        previous = _previous_turn_end(out)
        if previous is not None:
            marked.append(previous)
    for index in marked:  # at most three: the system prompt (or the tools), the newest message and the one before
        out[index] = _marked(out[index])
    return out, tools


def _previous_turn_end(messages: list[dict[str, Any]]) -> int | None:
    """The newest message of the request before this one: the last one before the newest assistant reply."""
    for index in range(len(messages) - 1, 0, -1):
        if messages[index].get("role") == "assistant":
            before = index - 1
            return before if before > 0 and messages[before].get("role") != "system" else None
    return None


def _marked(message: dict[str, Any]) -> dict[str, Any]:
    """The message with a breakpoint on its last content part (a tool result's on the message, which LiteLLM puts
    on the `tool_result` block); an empty text cannot carry one and is left unmarked."""
    content = message.get("content")
    if message.get("role") == "tool":
        return {**message, "cache_control": EPHEMERAL}
    if isinstance(content, str) and content:
        return {**message, "content": [{"type": "text", "text": content, "cache_control": EPHEMERAL}]}
    if isinstance(content, list) and content and isinstance(content[-1], dict):
        return {**message, "content": [*content[:-1], {**content[-1], "cache_control": EPHEMERAL}]}
    return message

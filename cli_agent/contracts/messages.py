"""The conversation: messages, tool calls and usage, as frozen dataclasses.

Providers turn these into their wire shape at the boundary (`to_openai`); nothing else builds raw message dicts.
"""

from __future__ import annotations

import functools
import json
from dataclasses import field
from typing import Any, Literal, Protocol

from cli_agent.contracts.images import ImagePart
from cli_agent.contracts.records import dataclass

__all__ = ["Message", "ToolCall", "Usage", "reset_messages"]

Role = Literal["system", "user", "assistant", "tool"]


@dataclass(frozen=True)
class ToolCall:
    """One call the model asked for. `arguments` is None when `raw_arguments` did not decode to an object;
    `error` then says why, and the call is answered with an error envelope instead of running."""

    id: str
    name: str
    arguments: dict[str, Any] | None
    raw_arguments: str = ""
    error: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments,
                "raw_arguments": self.raw_arguments, "error": self.error}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolCall:
        return cls(id=data["id"], name=data["name"], arguments=data.get("arguments"),
                   raw_arguments=data.get("raw_arguments", ""), error=data.get("error"))


@dataclass(frozen=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cached_tokens: int = 0  # of prompt_tokens, those the server took from its prompt cache (not evaluated again)
    cache_write_tokens: int = 0  # of prompt_tokens, those written to the prompt cache (Anthropic's cache creation)

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    @property
    def evaluated_tokens(self) -> int:
        """Prompt tokens the server evaluated (not served from its cache)."""
        return self.prompt_tokens - self.cached_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens,
                     self.completion_tokens + other.completion_tokens,
                     self.cost_usd + other.cost_usd, self.cached_tokens + other.cached_tokens,
                     self.cache_write_tokens + other.cache_write_tokens)

    def to_dict(self) -> dict[str, Any]:
        return {"prompt_tokens": self.prompt_tokens, "completion_tokens": self.completion_tokens,
                "total_tokens": self.total_tokens, "cost_usd": round(self.cost_usd, 6),
                "cached_tokens": self.cached_tokens, "cache_write_tokens": self.cache_write_tokens,
                "evaluated_tokens": self.evaluated_tokens}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Usage:
        return cls(int(data.get("prompt_tokens", 0)), int(data.get("completion_tokens", 0)),
                   float(data.get("cost_usd", 0.0)), int(data.get("cached_tokens", 0)),
                   int(data.get("cache_write_tokens", 0)))


@dataclass(frozen=True)
class Message:
    role: Role
    content: str | None = None
    tool_calls: tuple[ToolCall, ...] = field(default_factory=tuple)
    tool_call_id: str | None = None
    name: str | None = None
    images: tuple[ImagePart, ...] = ()  # a user's images (`@shot.png`, --image) or read_file's, after the text
    # A reasoning model's signed thinking blocks (LiteLLM's `thinking_blocks`), sent back unchanged with the calls
    thinking_blocks: tuple[dict[str, Any], ...] = ()

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI chat-completions shape, which LiteLLM and every OpenAI-compatible server take."""
        content: Any = self.content
        if self.images:
            content = [{"type": "text", "text": self.content or ""}, *(i.to_openai() for i in self.images)]
        out: dict[str, Any] = {"role": self.role, "content": content}
        if self.thinking_blocks:
            out["thinking_blocks"] = [dict(b) for b in self.thinking_blocks]
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name,
                              "arguments": c.raw_arguments or json.dumps(c.arguments or {})}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        if self.name is not None and self.role == "tool":
            out["name"] = self.name
        return out

    @functools.cached_property
    def chars(self) -> int:
        """The characters of its text and its calls' arguments, counted once (context estimates sum them each step)."""
        return (len(self.content or "") + sum(len(c.raw_arguments) for c in self.tool_calls)
                + sum(len(i.label) for i in self.images))

    @functools.cached_property
    def openai_json(self) -> bytes:
        """`to_openai()` as JSON, encoded once per message (a request re-sends the whole history every step)."""
        return json.dumps(self.to_openai(), ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": self.content,
                "tool_calls": [c.to_dict() for c in self.tool_calls],
                "tool_call_id": self.tool_call_id, "name": self.name,
                **({"images": [i.to_dict() for i in self.images]} if self.images else {}),
                **({"thinking_blocks": [dict(b) for b in self.thinking_blocks]} if self.thinking_blocks else {})}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Message:
        return cls(role=data["role"], content=data.get("content"),
                   tool_calls=tuple(ToolCall.from_dict(c) for c in data.get("tool_calls") or ()),
                   tool_call_id=data.get("tool_call_id"), name=data.get("name"),
                   images=tuple(ImagePart.from_dict(i) for i in data.get("images") or () if isinstance(i, dict)),
                   thinking_blocks=tuple(b for b in data.get("thinking_blocks") or () if isinstance(b, dict)))


class Reset(Protocol):
    """What a `ConversationReset` event says of the conversation after it (`/clear`, `/compact`)."""

    @property
    def kind(self) -> str: ...  # "clear" or "compact"

    @property
    def summary(self) -> str: ...  # the summary a compaction starts from


_SUMMARY_HEAD = "(The conversation so far, summarised to save context. Continue from it.)\n\n"
_ACK = "Understood. I have the summary and will continue from it."


def summary_messages(summary: str) -> list[Message]:
    """The conversation a compaction leaves: the summary, and the model's acknowledgement (so turns alternate)."""
    return [Message("user", _SUMMARY_HEAD + summary.strip()), Message("assistant", _ACK)]


def reset_messages(reset: Reset) -> list[Message]:
    """The conversation right after `reset`: nothing, or the summary."""
    return summary_messages(reset.summary) if reset.kind == "compact" else []

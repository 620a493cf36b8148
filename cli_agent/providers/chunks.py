"""What a streamed chat-completions chunk says besides its text: the usage (with the prompt cache's share, in each
provider's own fields) and Anthropic's signed thinking blocks as LiteLLM streams them."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from cli_agent.contracts import Usage


def chunk_usage(chunk: Mapping[str, Any]) -> Usage | None:
    """The usage a chunk reports (its `usage`, else llama.cpp's `timings`), None when it reports none."""
    return _usage(chunk.get("usage")) or _timings_usage(chunk.get("timings"))


def _usage(data: Mapping[str, Any] | None) -> Usage | None:
    """The usage of a chunk, with the prompt cache's share from whichever field the server fills: OpenAI's,
    DeepSeek's, Gemini's and llama.cpp's `prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`
    and `cache_creation_input_tokens` (as LiteLLM passes them on; its `prompt_tokens` counts them), DeepSeek's
    `prompt_cache_hit_tokens`."""
    if not data:
        return None
    details = data.get("prompt_tokens_details")
    details = details if isinstance(details, Mapping) else {}
    cached = details.get("cached_tokens") or data.get("cache_read_input_tokens") or data.get("prompt_cache_hit_tokens")
    written = data.get("cache_creation_input_tokens") or details.get("cache_creation_tokens")
    return Usage(int(data.get("prompt_tokens") or 0), int(data.get("completion_tokens") or 0),
                 cached_tokens=int(cached or 0), cache_write_tokens=int(written or 0))


def _timings_usage(timings: Any) -> Usage | None:
    """llama.cpp's per-chunk `timings` (with `timings_per_token`): the usage so far of a reply cut off before its
    last chunk, which alone carries `usage`."""
    if not isinstance(timings, Mapping) or "prompt_n" not in timings:
        return None
    cached = int(timings.get("cache_n") or 0)
    return Usage(int(timings.get("prompt_n") or 0) + cached, int(timings.get("predicted_n") or 0),
                 cached_tokens=cached)


class ThinkingBlocks:
    """Anthropic's thinking blocks as LiteLLM streams them (`thinking_blocks` in a delta): pieces of a block's
    thinking, then its signature; a redacted block whole. Each block is kept as the provider signed it."""

    def __init__(self) -> None:
        self._done: list[dict[str, Any]] = []
        self._open: list[str] = []

    def feed(self, blocks: Any) -> None:
        for block in blocks if isinstance(blocks, list) else ():
            if not isinstance(block, Mapping):
                continue
            if block.get("type") == "redacted_thinking":
                self._done.append(dict(block))
            elif block.get("signature"):  # LiteLLM repeats the thinking with it: ours is this block's alone
                self._done.append({"type": "thinking", "thinking": "".join(self._open) or block.get("thinking", ""),
                                   "signature": block["signature"]})
                self._open = []
            elif isinstance(block.get("thinking"), str):
                self._open.append(block["thinking"])

    def blocks(self) -> tuple[dict[str, Any], ...]:
        """The signed blocks (an unsigned one cannot go back: the provider would refuse it)."""
        return tuple(self._done)

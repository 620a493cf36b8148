"""Fitting the conversation into the model's context window: near the window, the oldest tool results give way to
one-line notes (the newest never does), and a tool result too long for the model is cut with a note saying how to
get the rest. Token counts are estimates (about four characters a token), good enough to decide when to elide."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from cli_agent.contracts import Envelope, Message, Warning
from cli_agent.prompt import Plan

ELIDE_AT = 0.8  # share of the window the conversation is kept under


class ContextWindow:
    """What the agent knows of its context window: the tool results it may elide, the window once a request has
    asked for it, and the estimated tokens of the plan's fixed part (system prompt and tool schemas)."""

    def __init__(self) -> None:
        self._results: list[tuple[int, str]] = []  # (history index, tool) of every tool result, oldest first
        self._window: int | None = None
        self._fixed = 0
        self._fixed_for: Plan | None = None  # the plan `_fixed` was estimated for

    def note_result(self, index: int, tool: str) -> None:
        """The conversation's message at `index` is the result of `tool` (elidable once it is not the newest)."""
        self._results.append((index, tool))

    def clear(self) -> None:
        self._results.clear()

    def use(self, history: list[Message]) -> tuple[int, int | None]:
        """(estimated tokens the next request carries, the context window or None until the first request)."""
        return self._fixed + history_tokens(history), self._window

    def fit(self, history: list[Message], plan: Plan, window: int | None) -> Iterator[Warning]:
        """Near `window`, replace the oldest tool results in `history` with one-line notes, and say so."""
        if self._fixed_for is not plan:  # a plan is reused while the tools and the prompt stay the same
            self._fixed_for, self._fixed = plan, _tokens(plan.system or "") + _tokens(str(plan.schemas or ""))
        self._window = window
        if not window:
            return
        budget = int(window * ELIDE_AT)
        used = self._fixed + history_tokens(history)
        elided = 0
        for index, tool in self._results[:-1]:  # the newest result is never elided
            if used <= budget:
                break
            message = history[index]
            if (message.content or "").startswith("[elided"):
                continue
            note = (f"[elided to fit the context window: the result of {tool} "
                    f"({len(message.content or ''):,} characters); call {tool} again if you need it]")
            used -= _tokens(message.content or "") - _tokens(note)
            history[index] = replace(message, content=note)
            elided += 1
        if elided:
            yield Warning(code="context_elided", message=f"{elided} old tool result(s) elided to stay within the "
                                                         f"context window ({window:,} tokens)")


def for_model(envelope: Envelope, limit: int) -> tuple[str, int]:
    """The envelope as the model sees it, cut at `limit` characters with a note saying how to get the rest; and how
    many characters were cut."""
    text = envelope.to_json()
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return (text[:limit] + f"\n[... {cut:,} more characters left out. Ask for less: read_file with "
                           "start_line/end_line, or a narrower search or pattern.]"), cut


def history_tokens(history: list[Message]) -> int:
    return sum(m.chars // 4 + 1 for m in history)  # _tokens of each message's text and arguments


def _tokens(text: str) -> int:
    return len(text) // 4 + 1

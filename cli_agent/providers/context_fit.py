"""A request fitted to the model's context before it is sent, and again when a server says it was over.

`fitted(messages, tools_chars, context_tokens, reserve_tokens)` estimates the request's tokens (`estimated_tokens`:
a character count, 3 characters a token, on the safe side for code) and, over `context_tokens - reserve_tokens`
(the room the reply needs), leaves out in turn: the older tool results whole (oldest first), then the middle of
any long message but the system prompt and the task. What is left out is replaced by a note the model sees
(`[N characters of ... left out to fit the model's context]`). The system prompt, the first user message and the
last two messages are never dropped whole. `over_context(detail)` reads a server's "over the context" error
(llama.cpp's `request (9685 tokens) exceeds the available context size (8192 tokens)`, OpenAI's
`maximum context length`) and says by how much, so that the one retry fits tighter.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from cli_agent.contracts import Message

CHARS_PER_TOKEN = 3  # a safe estimate for code and JSON (llama.cpp's tokenizers give 3.2 to 4 on source code)
PER_MESSAGE = 8  # tokens a message's framing costs
KEEP_CHARS = 1500  # of a long message cut in the middle, what is kept of its start (and half that of its end)
_OVER = re.compile(r"exceeds? the (?:available )?context|maximum context length|context[_ ]length_exceeded|"
                   r"context size|too many tokens", re.IGNORECASE)
_COUNTS = re.compile(r"(\d+)\s*tokens?\D{1,80}?(\d+)\s*tokens?", re.IGNORECASE)


def estimated_tokens(messages: Sequence[Message], tools_chars: int = 0) -> int:
    chars = tools_chars + sum(len(m.content or "") + sum(len(str(c.arguments)) + 40 for c in m.tool_calls)
                              for m in messages)
    return chars // CHARS_PER_TOKEN + PER_MESSAGE * len(messages)


def _note(chars: int, what: str) -> str:
    return f"[{chars} characters of {what} left out to fit the model's context]"


def fitted(messages: tuple[Message, ...], tools_chars: int, context_tokens: int,
           reserve_tokens: int) -> tuple[tuple[Message, ...], int]:
    """`messages` within the context (see the module's docstring), and how many were cut (0: sent as they are)."""
    budget = max(256, context_tokens - reserve_tokens)
    if estimated_tokens(messages, tools_chars) <= budget:
        return messages, 0
    out = list(messages)
    first_user = next((i for i, m in enumerate(out) if m.role == "user"), -1)
    kept = {i for i, m in enumerate(out) if m.role == "system"} | {first_user, len(out) - 1, len(out) - 2}
    cut = 0
    for i, message in enumerate(out):  # the older tool results, oldest first
        if estimated_tokens(out, tools_chars) <= budget:
            return tuple(out), cut
        if message.role == "tool" and i not in kept and len(message.content or "") > 200:
            out[i] = replace(message, content=_note(len(message.content or ""), "an earlier tool result"))
            cut += 1
    order = [i for i in range(len(out)) if i not in kept] + sorted(kept - {first_user, -1}) + [first_user]
    for i in order:  # then the middle of the long ones, the task last, never the system prompt
        over = estimated_tokens(out, tools_chars) - budget
        if over <= 0:
            break
        if i < 0 or out[i].role == "system":
            continue
        text = out[i].content or ""
        drop = min(len(text) - KEEP_CHARS - KEEP_CHARS // 2, over * CHARS_PER_TOKEN + 200)
        if drop > 200:
            start = KEEP_CHARS + (len(text) - KEEP_CHARS - KEEP_CHARS // 2 - drop)
            out[i] = replace(out[i], content=text[:start] + "\n" + _note(drop, "this message") + "\n"
                             + text[start + drop:])
            cut += 1
    return tuple(out), cut


def over_context(detail: str) -> float | None:
    """When a server's error says the request was over the context, the share of it to fit a retry to (the size
    it names over the tokens it counted, with a margin); None for any other error."""
    if not _OVER.search(detail):
        return None
    counts = _COUNTS.search(detail)
    if counts:
        sent, size = int(counts.group(1)), int(counts.group(2))
        if sent > size > 0:
            return size / sent * 0.9
    return 0.75

"""What the local model's requests carry and how its replies are watched: the sampling set explicitly, the slot
and its prompt cache (`wire_options`), what every project shares first (`shared_first`), the fingerprint of a
run's plan for the warm cache (`plan_key`), and the cut of a reply that runs away (`cut_runaway`).

A small model can run on inside a JSON string until the token limit: a reply whose tail repeats itself is cut there
and ends as a reply cut off (`finish_reason: length`, its usage from llama.cpp's per-token `timings`), which the
loop treats as malformed.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

from cli_agent.contracts import Message
from cli_agent.providers.base import END_OF_REPLY, ProviderRequest

MAX_TOKENS = 2048  # a constrained reply that never closes its JSON still ends
_PLAN_ONLY = ("model", "protocol")  # plan options that describe the request, not wire parameters
# Sampling set here, not left to the runtime's defaults (which differ between llama.cpp releases): greedy, with
# the samplers that could reorder a greedy choice turned off. A request's own options (temperature ...) win.
SAMPLING: dict[str, Any] = {"temperature": 0.0, "top_k": 1, "top_p": 1.0, "min_p": 0.0, "repeat_penalty": 1.0,
                            "presence_penalty": 0.0, "frequency_penalty": 0.0, "dry_multiplier": 0.0, "seed": 0}
# A temperature above 0 with top_k 1 would still be greedy: candidates (`attempts`) would all be the same reply.
SAMPLED: dict[str, Any] = {"top_k": 40, "top_p": 0.95, "min_p": 0.05, "seed": -1}
# llama.cpp applies the temperature last, after top_p and min_p: a token the model is 95 % sure of is left alone
# there, whatever the temperature. A request that asks for the whole distribution (`top_p` 1) gets no min_p cut.
WHOLE: dict[str, Any] = {"min_p": 0.0}
RUNAWAY_CHARS = 512  # a reply whose last RUNAWAY_CHARS characters repeat one unit of at most RUNAWAY_PERIOD ...
RUNAWAY_PERIOD = 32  # ... characters (16 times or more) has run away: it is cut there


def wire_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A plan's options as the server takes them: sampling explicit (SAMPLING, under the plan's own; a temperature
    above 0 samples from the likeliest tokens, SAMPLED, with a fresh seed unless one is given; with `top_p` 1 from
    all of the top_k, WHOLE), the length
    bounded, pinned to slot 0 with its prompt cache, and llama.cpp's timings in every chunk."""
    own = {k: v for k, v in options.items() if k not in _PLAN_ONLY}
    sampled = SAMPLED if float(own.get("temperature") or 0) > 0 else {}
    if sampled and float(own.get("top_p") or 0) >= 1:
        sampled = sampled | WHOLE
    wire = SAMPLING | sampled | own
    wire.setdefault("max_tokens", MAX_TOKENS)
    return wire | {"id_slot": 0, "cache_prompt": True, "timings_per_token": True}


PROJECT_START = "\n\nFiles: "  # where the compact prompt's own part of a project begins (its listing, then more)


def shared_first(messages: tuple[Message, ...], shared_end: str) -> tuple[Message, ...]:
    """The messages with what every project shares first: the system prompt keeps the instructions, the tools, the
    reply format and `shared_end` (the words on answering that close it), and the project's own part (from its
    file listing on: its instructions, facts and test command) opens the first user message instead. So the
    server's cache, and the state saved for the next process (`plan_key`), hold a prefix that a project the model
    never saw shares too."""
    if not messages or messages[0].role != "system" or not messages[0].content:
        return messages
    text = messages[0].content
    start = text.find(PROJECT_START)
    if start < 0:
        return messages
    end = text.find(shared_end.strip(), start) if shared_end.strip() else -1
    project = text[start:end if end >= 0 else len(text)].strip()
    system = text[:start] + ("\n\n" + text[end:] if end >= 0 else "")
    first = next((i for i, m in enumerate(messages) if m.role == "user"), None)
    if first is None:
        return messages
    out = list(messages)
    out[0] = replace(messages[0], content=system)
    out[first] = replace(messages[first], content=f"{project}\n\n{messages[first].content or ''}")
    return tuple(out)


def plan_key(request: ProviderRequest) -> str:
    """The fingerprint of what every request of a run starts with: the system prompt and the constrained schema."""
    system = next((m.content for m in request.messages if m.role == "system"), "")
    plan = {"system": system, "response_format": request.options.get("response_format"),
            "tools": request.tools}
    return hashlib.sha256(json.dumps(plan, sort_keys=True, default=str).encode("utf-8", "surrogatepass")).hexdigest()


def runs_away(text: str) -> bool:
    """The reply's tail is one short unit repeated over RUNAWAY_CHARS characters (`\\t\\t\\t...`, `ababab...`)."""
    if len(text) < RUNAWAY_CHARS:
        return False
    tail = text[-RUNAWAY_CHARS:]
    return any(tail[period:] == tail[:-period] for period in range(1, RUNAWAY_PERIOD + 1))


def cut_runaway(chunks: Iterator[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """The server's chunks as they come, until the reply's text runs away (runs_away): then the connection is
    closed (the server stops generating) and the reply ends there, cut off (`finish_reason: length`). Its usage so
    far comes from the chunks' llama.cpp `timings`."""
    tail = ""
    for chunk in chunks:
        yield chunk
        for choice in chunk.get("choices") or ():
            tail = (tail + ((choice.get("delta") or {}).get("content") or ""))[-RUNAWAY_CHARS:]
        if runs_away(tail):
            close = getattr(chunks, "close", None)
            if close is not None:
                close()
            yield {"choices": [{"index": 0, "delta": {}, "finish_reason": "length"}]}
            yield END_OF_REPLY
            return

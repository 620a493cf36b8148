"""A model script: the one reply format both model fakes play, the `ScriptedProvider` (in process) and the
`testing.FakeOpenAIServer` (over HTTP on 127.0.0.1).

Each item of a script is one reply to one request:

    {"text": "...", "finish_reason"?: "stop", "chunks"?: ["...", ...]}     a plain answer (chunks: its text deltas)
    {"thinking": "...", ...}                         a reasoning model's thinking, streamed before the answer
    {"tool_calls": [{"name": ..., "arguments": {...} | "raw", "id"?: ...}], "text"?: "..."}
    {"raw": "..."}                                   text exactly as a json-protocol model writes it
    {"error": "retryable" | "fatal" | "missing_key", "message"?: "..."}
    {"status": 429 | 500 | 401 | ..., "headers"?: {...}, "message"?: "..."}   an HTTP error, as a server sends it
    {"close": true}                                  the connection dropped without an answer (retryable)
    "delay": seconds (before anything), "chunk_delay": seconds (between deltas) and "usage": {"prompt_tokens",
    "completion_tokens"} combine with any of the above.
    "first_token_s": seconds, a prompt read slowly: the reply waits this long before anything (after `delay`), and
    the `ScriptedProvider` says so beforehand when asked how long the request would wait for its first token (as the
    bundled model's provider does, `first_token_seconds`).

`error` and `status` are two spellings of one failure: `error_kind` gives the kind for a status (429 and 5xx are
retryable, 401 and 403 a missing key, any other status fatal) and `status_of` the status for a kind.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from cli_agent.contracts import UsageError

KEYS = frozenset({"text", "tool_calls", "raw", "error", "status", "headers", "close", "message", "delay",
                  "chunk_delay", "chunks", "usage", "finish_reason", "thinking", "first_token_s"})
ERROR_KINDS = ("retryable", "fatal", "missing_key")
_STATUS = {"retryable": 503, "fatal": 400, "missing_key": 401}


def check_item(n: int, item: Any) -> Mapping[str, Any]:
    """The item, checked: a UsageError naming reply `n` and the key at fault otherwise."""
    if not isinstance(item, Mapping):
        raise UsageError(f"scripted reply {n} must be an object, got {type(item).__name__}")
    unknown = sorted(set(item) - KEYS)
    if unknown:
        raise UsageError(f"scripted reply {n}: unknown key(s) {', '.join(unknown)}")
    if "error" in item and item["error"] not in ERROR_KINDS:
        raise UsageError(f"scripted reply {n}: error must be one of {', '.join(ERROR_KINDS)}, got {item['error']!r}")
    if "status" in item and (not isinstance(item["status"], int) or not 400 <= item["status"] <= 599):
        raise UsageError(f"scripted reply {n}: status must be an HTTP error status (400-599)")
    for key in ("text", "raw", "message", "finish_reason", "thinking"):
        if key in item and not isinstance(item[key], str):
            raise UsageError(f"scripted reply {n}: {key} must be a string")
    for key in ("delay", "chunk_delay", "first_token_s"):
        value = item.get(key, 0)
        if not isinstance(value, int | float) or value < 0:
            raise UsageError(f"scripted reply {n}: {key} must be a number of seconds >= 0")
    for key in ("usage", "headers"):
        if not isinstance(item.get(key, {}), Mapping):
            raise UsageError(f"scripted reply {n}: {key} must be an object")
    chunks = item.get("chunks", [])
    if not isinstance(chunks, list) or not all(isinstance(c, str) for c in chunks):
        raise UsageError(f"scripted reply {n}: chunks must be a list of strings")
    calls = item.get("tool_calls", [])
    if not isinstance(calls, list) or not all(
            isinstance(c, Mapping) and isinstance(c.get("name"), str)
            and isinstance(c.get("arguments", {}), dict | str) for c in calls):
        raise UsageError(f"scripted reply {n}: tool_calls must be a list of "
                         '{"name": str, "arguments": object | str, "id"?: str}')
    return item


def item_text(item: Mapping[str, Any]) -> str:
    return str(item.get("text", item.get("raw", "")) or "")


def item_calls(item: Mapping[str, Any]) -> list[tuple[str | None, str, str]]:
    """The item's tool calls as (id or None, name, raw arguments)."""
    calls = []
    for call in item.get("tool_calls") or ():
        arguments = call.get("arguments", {})
        calls.append((call.get("id"), call["name"], arguments if isinstance(arguments, str) else json.dumps(arguments)))
    return calls


def item_finish(item: Mapping[str, Any]) -> str:
    return str(item.get("finish_reason") or ("tool_calls" if item.get("tool_calls") else "stop"))


def error_kind(item: Mapping[str, Any]) -> str | None:
    """The failure the item stands for ("retryable", "fatal", "missing_key"), or None for a reply."""
    if "error" in item:
        return str(item["error"])
    if item.get("close"):
        return "retryable"
    status = item.get("status")
    if status is None:
        return None
    return "retryable" if status == 429 or status >= 500 else "missing_key" if status in (401, 403) else "fatal"


def status_of(item: Mapping[str, Any]) -> int | None:
    """The HTTP status a server answers the item with (None: a 200 reply, or a dropped connection)."""
    if "status" in item:
        return int(item["status"])
    return _STATUS[item["error"]] if "error" in item else None


def item_wait(item: Mapping[str, Any]) -> float:
    """The seconds a reply waits before anything: its `delay`, then its `first_token_s`."""
    return float(item.get("delay", 0)) + float(item.get("first_token_s", 0))

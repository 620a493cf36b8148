"""ScriptedProvider: a deterministic model that plays back a list of replies (tests, `cli-agent eval`, replay).

Each script item is one reply:

    {"text": "...", "finish_reason"?: "stop"}                      a plain answer
    {"tool_calls": [{"name": ..., "arguments": {...} | "raw", "id"?: ...}], "text"?: "..."}
    {"raw": "..."}                                                  text exactly as a json-protocol model writes it
    {"error": "retryable" | "fatal" | "missing_key", "message"?: "..."}
    "delay": seconds and "usage": {...} combine with any of the above.

It records every request in `.requests` and checks each one like a strict server would, raising `ScriptError`:
every tool result answers a call of the assistant message right before it, every call is answered before anything
else is said, and no request comes after the script is exhausted ("no scripted reply left").
"""

from __future__ import annotations

import json
import re
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from cli_agent.errors import (
    CliAgentError,
    MissingCredentialsError,
    ProviderError,
    RetryableProviderError,
    UsageError,
)
from cli_agent.messages import Message, ToolCall, Usage
from cli_agent.providers.base import ProviderReply, ProviderRequest, deadline_of, decode_tool_call, timeout_error

__all__ = ["ScriptError", "ScriptedProvider", "check_conversation"]

_KEYS = {"text", "tool_calls", "raw", "error", "message", "delay", "usage", "finish_reason"}
_ERRORS: dict[str, type[CliAgentError]] = {
    "retryable": RetryableProviderError,
    "fatal": ProviderError,
    "missing_key": MissingCredentialsError,
}
_FILE_KEYS = {"replies", "name", "native_tools", "context_window"}


class ScriptError(AssertionError):
    """A request broke the conversation's rules, or came after the script ran out."""


class ScriptedProvider:
    def __init__(self, replies: Iterable[Mapping[str, Any]], *, name: str = "scripted",
                 native_tools: bool = True, context_window: int | None = None) -> None:
        self.name = name
        self._replies = deque(_checked(n, item) for n, item in enumerate(replies))
        self._native_tools = native_tools
        self._context_window = context_window
        self._next_id = 1
        self.requests: list[ProviderRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """A JSON list of replies, or an object {"replies": [...], "native_tools"?, "context_window"?}."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise UsageError(f"cannot read script {path}: {exc.strerror or exc}") from exc
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise UsageError(f"script {path} is not valid JSON: {exc}") from exc
        options: dict[str, Any] = {"name": f"scripted:{path}"}
        if isinstance(data, dict):
            unknown = sorted(set(data) - _FILE_KEYS)
            if unknown:
                raise UsageError(f"script {path}: unknown key(s) {', '.join(unknown)}; "
                                 f"expected {', '.join(sorted(_FILE_KEYS))}")
            options.update(data)
            data = options.pop("replies", None)
        if not isinstance(data, list):
            raise UsageError(f"script {path} must be a JSON list of replies or an object with \"replies\"")
        try:
            return cls(data, **options)
        except UsageError as exc:
            raise UsageError(f"script {path}: {exc}") from exc

    @property
    def remaining(self) -> int:
        return len(self._replies)

    def supports_native_tools(self) -> bool:
        return self._native_tools

    def context_window(self) -> int | None:
        return self._context_window

    def close(self) -> None:
        pass

    def stream(self, request: ProviderRequest) -> Iterator[str | ProviderReply]:
        self.requests.append(request)
        check_conversation(request.messages)
        if not self._replies:
            raise ScriptError(f"no scripted reply left for request {len(self.requests)}")
        item = self._replies.popleft()
        _wait(float(item.get("delay", 0)), request.timeout_s)
        if "error" in item:
            raise _ERRORS[item["error"]](item.get("message") or f"scripted {item['error']} error")
        reply = self._reply(item)
        yield from _deltas(reply.text)
        yield reply

    def _reply(self, item: Mapping[str, Any]) -> ProviderReply:
        calls = []
        for call in item.get("tool_calls") or ():
            arguments = call.get("arguments", {})
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            calls.append(decode_tool_call(call.get("id") or f"call_{self._next_id}", call["name"], raw))
            self._next_id += 1
        text = str(item.get("text", item.get("raw", "")))
        finish = item.get("finish_reason") or ("tool_calls" if calls else "stop")
        return ProviderReply(text, tuple(calls), finish, Usage.from_dict(item.get("usage") or {}))


def check_conversation(messages: Sequence[Message]) -> None:
    """Raise ScriptError unless every tool result answers a call of the assistant message just before its run
    of tool results, and every call is answered before the next non-tool message or the end of the request."""
    if not messages:
        raise ScriptError("a request with no messages")
    pending: dict[str, ToolCall] = {}
    for n, message in enumerate(messages):
        if message.role == "tool":
            if message.tool_call_id not in pending:
                raise ScriptError(f"message {n}: tool result {message.tool_call_id!r} answers no pending tool call "
                                  "of the assistant message before it")
            del pending[message.tool_call_id]
            continue
        if pending:
            raise ScriptError(f"message {n} ({message.role}) comes before tool call(s) "
                              f"{', '.join(sorted(pending))} are answered")
        if message.role == "assistant":
            pending = {call.id: call for call in message.tool_calls}
            if len(pending) != len(message.tool_calls):
                raise ScriptError(f"message {n}: the assistant's tool call ids are not unique")
    if pending:
        raise ScriptError(f"the request ends with unanswered tool call(s) {', '.join(sorted(pending))}")


def _checked(n: int, item: Any) -> Mapping[str, Any]:
    if not isinstance(item, Mapping):
        raise UsageError(f"scripted reply {n} must be an object, got {type(item).__name__}")
    unknown = sorted(set(item) - _KEYS)
    if unknown:
        raise UsageError(f"scripted reply {n}: unknown key(s) {', '.join(unknown)}")
    if "error" in item and item["error"] not in _ERRORS:
        raise UsageError(f"scripted reply {n}: error must be one of {', '.join(_ERRORS)}, got {item['error']!r}")
    for key in ("text", "raw", "message", "finish_reason"):
        if key in item and not isinstance(item[key], str):
            raise UsageError(f"scripted reply {n}: {key} must be a string")
    delay = item.get("delay", 0)
    if not isinstance(delay, int | float) or delay < 0:
        raise UsageError(f"scripted reply {n}: delay must be a number of seconds >= 0")
    if not isinstance(item.get("usage", {}), Mapping):
        raise UsageError(f"scripted reply {n}: usage must be an object")
    calls = item.get("tool_calls", [])
    if not isinstance(calls, list) or not all(
            isinstance(c, Mapping) and isinstance(c.get("name"), str)
            and isinstance(c.get("arguments", {}), dict | str) for c in calls):
        raise UsageError(f"scripted reply {n}: tool_calls must be a list of "
                         '{"name": str, "arguments": object | str, "id"?: str}')
    return item


def _wait(seconds: float, timeout_s: float | None) -> None:
    """Sleep `seconds` in small slices, but raise RunTimeoutError once the run's budget is gone."""
    deadline = deadline_of(timeout_s)
    end = time.monotonic() + seconds
    while (now := time.monotonic()) < end:
        if deadline is not None and now >= deadline:
            raise timeout_error(timeout_s, "the scripted model")
        time.sleep(min(0.02, end - now, float("inf") if deadline is None else max(0.0, deadline - now)))


def _deltas(text: str, pieces: int = 3) -> Iterator[str]:
    """The text in up to `pieces` deltas cut at word boundaries (they join back to exactly the text)."""
    words = re.findall(r"\s*\S+\s*", text) or ([text] if text else [])
    size = max(1, -(-len(words) // pieces))
    for start in range(0, len(words), size):
        yield "".join(words[start:start + size])

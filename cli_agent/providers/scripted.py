"""ScriptedProvider: a deterministic model that plays back a list of replies (tests, `cli-agent eval`, replay).

Each item of the script is one reply, in the format `providers.reply_script` defines (the same one the fake HTTP server
plays): text, tool calls, json-protocol text, errors (as `error` or as an HTTP `status`), delays.

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

from cli_agent.contracts import (
    CliAgentError,
    Message,
    MissingCredentialsError,
    ProviderError,
    RetryableProviderError,
    ToolCall,
    Usage,
    UsageError,
)
from cli_agent.providers.base import (
    ProviderReply,
    ProviderRequest,
    Thinking,
    decode_tool_call,
)
from cli_agent.providers.reply_script import check_item, error_kind, item_calls, item_finish, item_text, item_wait
from cli_agent.providers.waiting import deadline_of, timeout_error

__all__ = ["ScriptError", "ScriptedProvider"]

_ERRORS: dict[str, type[CliAgentError]] = {
    "retryable": RetryableProviderError,
    "fatal": ProviderError,
    "missing_key": MissingCredentialsError,
}
_FILE_KEYS = {"replies", "name", "native_tools", "context_window", "record"}


class ScriptError(AssertionError):
    """A request broke the conversation's rules, or came after the script ran out."""


class ScriptedProvider:
    def __init__(self, replies: Iterable[Mapping[str, Any]], *, name: str = "scripted",
                 native_tools: bool = True, context_window: int | None = None, vision: bool = True,
                 record: str | None = None) -> None:
        self.name = name
        self._record = record  # a file each request's messages are appended to, one JSON line each (tests' eyes)
        self._vision = vision
        self._replies = deque(check_item(n, item) for n, item in enumerate(replies))
        self._native_tools = native_tools
        self._context_window = context_window
        self._next_id = 1
        self.requests: list[ProviderRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedProvider:
        """A JSON list of replies, or an object {"replies": [...], "native_tools"?, "context_window"?, "record"?}
        (`record`: a file every request's messages are appended to, one JSON line a request)."""
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

    def supports_images(self) -> bool:
        return self._vision

    def first_token_seconds(self, request: ProviderRequest) -> float | None:
        """What the next reply says its request waits for its first token (`first_token_s`); None when it says
        nothing, as a hosted model's provider cannot tell."""
        item = self._replies[0] if self._replies else {}
        return float(item["first_token_s"]) if "first_token_s" in item else None

    def close(self) -> None:
        pass

    def stream(self, request: ProviderRequest) -> Iterator[str | Thinking | ProviderReply]:
        self.requests.append(request)
        if self._record:
            with open(self._record, "a", encoding="utf-8") as out:
                out.write(json.dumps([m.to_dict() for m in request.messages], ensure_ascii=False, default=str) + "\n")
        check_conversation(request.messages)
        if not self._replies:
            raise ScriptError(f"no scripted reply left for request {len(self.requests)}")
        item = self._replies.popleft()
        _wait(item_wait(item), request.timeout_s)
        kind = error_kind(item)
        if kind is not None:
            raise _ERRORS[kind](item.get("message") or f"scripted {kind} error")
        reply = self._reply(item)
        for piece in _deltas(str(item.get("thinking") or "")):
            yield Thinking(piece)
        for n, delta in enumerate(item.get("chunks") or _deltas(reply.text)):
            if n and item.get("chunk_delay"):
                _wait(float(item["chunk_delay"]), request.timeout_s)
            yield delta
        yield reply

    def _reply(self, item: Mapping[str, Any]) -> ProviderReply:
        calls = []
        for call_id, name, raw in item_calls(item):
            calls.append(decode_tool_call(call_id or f"call_{self._next_id}", name, raw))
            self._next_id += 1
        return ProviderReply(item_text(item), tuple(calls), item_finish(item), Usage.from_dict(item.get("usage") or {}),
                             thinking=str(item.get("thinking") or ""))


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

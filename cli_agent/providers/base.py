"""The provider seam, and what every transport shares.

A provider turns a `ProviderRequest` into a stream: text deltas (`str`) and a reasoning model's thinking
(`Thinking`) as they arrive, then exactly one `ProviderReply`. Transports speak the OpenAI chat-completions shape;
`ReplyAssembler` turns its chunks (streamed deltas with index-based tool-call fragments, or one whole message) into
that stream. Third-party exceptions are
translated at the boundary through a table of `Rule`s (`translate`); "retryable" is a column of the table.
"""

from __future__ import annotations

import contextlib
import json
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

from cli_agent.contracts.errors import CliAgentError, RetryableProviderError, RunTimeoutError
from cli_agent.contracts.messages import Message, ToolCall, Usage
from cli_agent.providers.chunks import ThinkingBlocks, chunk_usage

__all__ = [
    "END_OF_REPLY",
    "NoModel",
    "Preferences",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "ReplyAssembler",
    "Rule",
    "Thinking",
    "cancelled_by",
    "deadline_of",
    "decode_tool_call",
    "exception_chain",
    "exception_detail",
    "expired",
    "is_local_url",
    "iterate_until",
    "raise_if_cancelled",
    "relay",
    "rule_for_exception",
    "timeout_error",
    "translate",
]

T = TypeVar("T")
R = TypeVar("R")
_LOCAL_HOSTS = {"127.0.0.1", "localhost", "::1", "0.0.0.0"}


@dataclass(frozen=True)
class ProviderRequest:
    messages: tuple[Message, ...]
    tools: tuple[dict[str, Any], ...] | None = None  # OpenAI-style tool schemas; None for json protocol / chat
    options: Mapping[str, Any] = field(default_factory=dict)  # temperature, tool_choice, max_tokens ...
    timeout_s: float | None = None  # what is left of the run's budget: the provider never waits longer
    stream: bool = True

    def chat_params(self) -> dict[str, Any]:
        """The chat-completions parameters besides model, messages and `options` (which the transports apply last):
        `stream`, asking for the usage in the last chunk when streaming, and `tools`."""
        params: dict[str, Any] = {"stream": self.stream}
        if self.stream:
            params["stream_options"] = {"include_usage": True}
        if self.tools is not None:
            params["tools"] = list(self.tools)
        return params


@dataclass(frozen=True)
class ProviderReply:
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    thinking: str = ""  # a reasoning model's thinking, never part of the answer
    thinking_blocks: tuple[dict[str, Any], ...] = ()  # its signed blocks, to send back unchanged with the calls


class Thinking(NamedTuple):
    """A piece of a reasoning model's thinking, streamed apart from the answer's text."""

    text: str


@dataclass(frozen=True)
class Preferences:
    """What a provider asks of the sessions that use it (a provider class declares `preferences`; the default asks
    nothing): a wire protocol it needs whatever the settings say, request options it wants unless the settings
    set them, the prompt's detail, and whether its json replies are constrained by a schema sent with each request.
    `prompt_plan` is the one place that reads them."""

    protocol: Literal["native", "json"] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    detail: Literal["full", "compact"] | None = None
    constrained_json: bool = False


@runtime_checkable
class Provider(Protocol):
    name: str

    def stream(self, request: ProviderRequest) -> Iterator[str | Thinking | ProviderReply]:
        """Text deltas (and `Thinking`) as they arrive, then exactly one ProviderReply."""
        ...

    def supports_native_tools(self) -> bool: ...

    def context_window(self) -> int | None: ...

    def close(self) -> None: ...


class NoModel:
    """The provider of a session that only runs fixed calls (`cli-agent tools run`): it never sends a request. A
    provider with no server behind it (replay's) extends it."""

    name = "no model"

    def stream(self, request: ProviderRequest) -> Iterator[str | ProviderReply]:
        raise CliAgentError("internal error: this session has no model to ask")

    def supports_native_tools(self) -> bool:
        return True

    def context_window(self) -> int | None:
        return None

    def close(self) -> None:
        pass


def decode_tool_call(call_id: str, name: str, raw: str | None) -> ToolCall:
    """A ToolCall whose arguments are the decoded JSON object, or None with `error` saying why.
    Empty arguments mean `{}`: models send "" for calls without parameters."""
    raw = raw or ""
    if not raw.strip():
        return ToolCall(id=call_id, name=name, arguments={}, raw_arguments=raw)
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw,
                        error=f"arguments are not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}")
    except RecursionError:
        return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw,
                        error="arguments are not valid JSON: nested too deeply")
    if not isinstance(value, dict):
        return ToolCall(id=call_id, name=name, arguments=None, raw_arguments=raw,
                        error=f"arguments must be a JSON object, got {type(value).__name__}")
    return ToolCall(id=call_id, name=name, arguments=value, raw_arguments=raw)


END_OF_REPLY: Mapping[str, Any] = {"[DONE]": True}  # what a transport yields once the server ends the reply


class ReplyAssembler:
    """Collects OpenAI-shaped chunks (dicts) into one ProviderReply; `feed` returns the new text of a chunk."""

    def __init__(self) -> None:
        self._text: list[str] = []
        self._calls: dict[int, dict[str, Any]] = {}
        self._finish: str | None = None
        self._ended = False  # the server said the reply is whole (`[DONE]`, or one JSON body)
        self.usage = Usage()
        self._thinking: list[str] = []
        self._blocks = ThinkingBlocks()
        self.new_thinking = ""  # the thinking of the last chunk fed

    @property
    def complete(self) -> bool:
        """A finish reason or the end marker arrived: the reply was not cut off on the way."""
        return self._ended or self._finish is not None

    def feed(self, chunk: Mapping[str, Any]) -> str:
        if chunk is END_OF_REPLY:
            self._ended = True
            return ""
        self.usage = chunk_usage(chunk) or self.usage
        new = thought = ""
        for choice in chunk.get("choices") or ():
            delta = choice.get("delta") or choice.get("message") or {}
            if delta.get("content"):
                new += delta["content"]
            reasoning = delta.get("reasoning_content") or delta.get("reasoning")  # DeepSeek, vLLM, LiteLLM; Ollama
            if isinstance(reasoning, str):
                thought += reasoning
            self._blocks.feed(delta.get("thinking_blocks"))
            for fragment in delta.get("tool_calls") or ():
                self._add_fragment(fragment)
            self._finish = choice.get("finish_reason") or self._finish
        self._text.append(new)
        self._thinking.append(thought)
        self.new_thinking = thought
        return new

    def _add_fragment(self, fragment: Mapping[str, Any]) -> None:
        index = fragment.get("index")
        if index is None:  # some servers leave it out: a new id starts a new call
            last = max(self._calls, default=-1)
            fresh = fragment.get("id") and (last < 0 or self._calls[last]["id"] not in ("", fragment["id"]))
            index = last + 1 if fresh or last < 0 else last
        slot = self._calls.setdefault(int(index), {"id": "", "name": "", "arguments": []})
        function = fragment.get("function") or {}
        slot["id"] = slot["id"] or fragment.get("id") or ""
        slot["name"] = slot["name"] or function.get("name") or ""
        slot["arguments"].append(function.get("arguments") or "")

    def reply(self) -> ProviderReply:
        calls = tuple(decode_tool_call(slot["id"] or f"call_{index}", slot["name"], "".join(slot["arguments"]))
                      for index, slot in sorted(self._calls.items()))
        finish = self._finish or ("tool_calls" if calls else "stop")
        return ProviderReply("".join(self._text), calls, finish, self.usage, "".join(self._thinking),
                             self._blocks.blocks())


class Rule(NamedTuple):
    """One row of a translation table: the third-party exception class name (or HTTP status) it matches, the
    family of our error it becomes, whether it is worth retrying, and the one-line message ({where}, {detail})."""

    match: str | int
    error: type[CliAgentError]
    retryable: bool
    message: str


def translate(rule: Rule, **fields: Any) -> CliAgentError:
    """The error a matched rule describes; retryable rows become RetryableProviderError."""
    error = RetryableProviderError if rule.retryable else rule.error
    return error(rule.message.format(**fields))


def rule_for_exception(exc: BaseException, rules: Iterable[Rule], default: R) -> Rule | R:
    """The row naming the closest class in the exception's MRO (so subclasses win over their bases)."""
    by_name = {rule.match: rule for rule in rules}
    for klass in type(exc).__mro__:
        if klass.__name__ in by_name:
            return by_name[klass.__name__]
    return default


def exception_chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception, then what caused it, and so on (each once)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def exception_detail(exc: object, limit: int = 200) -> str:
    """One line of at most `limit` characters saying what `exc` (an exception or any text) was."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_local_url(url: str | None) -> bool:
    if not url:
        return False
    host = (urlsplit(url if "//" in url else f"//{url}").hostname or "").lower()
    return host in _LOCAL_HOSTS or host.endswith(".localhost")


def deadline_of(timeout_s: float | None) -> float | None:
    return None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)


def expired(deadline: float | None, slack: float = 0.05) -> bool:
    return deadline is not None and time.monotonic() >= deadline - slack


def timeout_error(timeout_s: float | None, where: str) -> RunTimeoutError:
    return RunTimeoutError(f"the run's time budget ran out ({timeout_s:g}s) waiting for {where}")


class _Workers:
    """Daemon threads kept for the next request: a request takes an idle one, or starts one only when all are busy
    (a stalled server still holding one). No thread is started per request once the session has one."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[queue.SimpleQueue[Callable[[], None]]] = queue.SimpleQueue()

    def run(self, job: Callable[[], None]) -> None:
        try:
            inbox = self._idle.get_nowait()
        except queue.Empty:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name="provider-stream", daemon=True).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            inbox.get()()
            self._idle.put(inbox)


_WORKERS = _Workers()
_CANCEL = threading.local()  # the flag that gives up a reply awaited in this thread (`cancelled_by`)
_CANCEL_POLL_S = 0.05


@contextlib.contextmanager
def cancelled_by(flag: threading.Event) -> Iterator[None]:
    """Inside: a reply awaited in this thread (a thread that no signal reaches, as an editor's turn) is given up as
    soon as `flag` is set, with the KeyboardInterrupt that Esc raises in the REPL; the request is left to end in its
    worker thread."""
    previous = getattr(_CANCEL, "flag", None)
    _CANCEL.flag = flag
    try:
        yield
    finally:
        _CANCEL.flag = previous


def raise_if_cancelled() -> None:
    """The KeyboardInterrupt of a cancel (`cancelled_by`) for a wait that polls (a model server loading)."""
    if getattr(_CANCEL, "flag", None) is not None and _CANCEL.flag.is_set():
        raise KeyboardInterrupt


def iterate_until(produce: Callable[[], Iterable[T]], deadline: float | None,
                  on_expiry: Callable[[], BaseException], *, in_thread: bool = False) -> Generator[T, None, None]:
    """Iterate `produce()` but never wait past `deadline`, nor past a cancel (`cancelled_by`): the blocking reads run
    in a daemon thread and the caller waits on a queue, so a stalled server costs no more than the budget (the
    thread ends on its own socket timeout). Without a deadline or a cancel flag the iterable is consumed in place,
    unless `in_thread`."""
    flag: threading.Event | None = getattr(_CANCEL, "flag", None)
    if deadline is None and not in_thread and flag is None:
        yield from produce()
        return
    items: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        iterator: Iterator[T] | None = None
        try:
            iterator = iter(produce())
            for item in iterator:
                items.put(("item", item))
                if stop.is_set():
                    break
            items.put(("end", None))
        except BaseException as exc:
            items.put(("error", exc))
        finally:
            with contextlib.suppress(Exception):
                getattr(iterator, "close", lambda: None)()

    _WORKERS.run(work)
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if flag is not None:
                raise_if_cancelled()
                wait = _CANCEL_POLL_S if wait is None else min(wait, _CANCEL_POLL_S)
            try:
                kind, value = items.get(timeout=wait)
            except queue.Empty:
                if flag is not None and not expired(deadline, slack=0):
                    continue
                raise on_expiry() from None
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()


def relay(chunks_of: Callable[[], Iterable[Mapping[str, Any]]], *, timeout_s: float | None, where: str,
          translate_error: Callable[[Exception], CliAgentError], in_thread: bool = False
          ) -> Iterator[str | Thinking | ProviderReply]:
    """A provider's `stream`: the text deltas of the chunks `chunks_of()` yields, as they arrive, then the assembled
    reply. Past `timeout_s` it raises RunTimeoutError; any other foreign error goes through `translate_error`."""
    deadline = deadline_of(timeout_s)
    assembler = ReplyAssembler()
    chunks = iterate_until(chunks_of, deadline, lambda: timeout_error(timeout_s, where), in_thread=in_thread)
    try:
        for chunk in chunks:
            text = assembler.feed(chunk)
            if assembler.new_thinking:
                yield Thinking(assembler.new_thinking)
            if text:
                yield text
    except CliAgentError:
        raise
    except Exception as exc:
        if expired(deadline):
            raise timeout_error(timeout_s, where) from exc
        raise translate_error(exc) from exc
    finally:
        chunks.close()
    if not assembler.complete:  # a cut connection looks like a short answer: never take it for one
        raise RetryableProviderError(f"{where} ended the reply without a finish reason or [DONE] (the stream was "
                                     f"cut off)")
    yield assembler.reply()

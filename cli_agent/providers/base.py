"""The provider seam, and what every transport shares.

A provider turns a `ProviderRequest` into a stream: text deltas (`str`) and a reasoning model's thinking
(`Thinking`) as they arrive, then exactly one `ProviderReply`. Transports speak the OpenAI chat-completions shape;
`ReplyAssembler` turns its chunks (streamed deltas with index-based tool-call fragments, or one whole message) into
that stream. Third-party exceptions are
translated at the boundary through a table of `Rule`s (`translate`); "retryable" is a column of the table.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, runtime_checkable
from urllib.parse import urlsplit

from cli_agent.contracts import CliAgentError, Message, RetryableProviderError, ToolCall, Usage, dataclass
from cli_agent.providers.chunks import ThinkingBlocks, chunk_usage
from cli_agent.providers.waiting import deadline_of, expired, iterate_until, timeout_error

__all__ = ["NoModel", "Preferences", "Provider", "ProviderReply", "ProviderRequest", "Thinking"]

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
    set them, the prompt's detail, whether its json replies are constrained by a schema sent with each request, and
    what the system prompt then adds to say how to answer. The planner (`prompt/plan.py`) is the one place that
    reads them."""

    protocol: Literal["native", "json"] | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    detail: Literal["full", "compact"] | None = None
    constrained_json: bool = False
    constrained_answer: str = ""  # appended to the system prompt of a constrained json request


@runtime_checkable
class Provider(Protocol):
    """A model behind `stream`. Two questions a provider may also answer, looked up when asked (a provider without
    them says "yes" and "cannot tell"): `supports_images()`, and `first_token_seconds(request) -> float | None`,
    how long `request` would wait for its first token (the bundled model's, `local.prompt_speed`)."""

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

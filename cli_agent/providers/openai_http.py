"""OpenAIHTTPProvider: any OpenAI-compatible server reached through an api_base, with plain httpx.

This is the fast path (no LiteLLM import): POST `{api_base}/chat/completions`, read the SSE stream, assemble text
and tool-call fragments. HTTP statuses and httpx's exceptions are translated through the two tables below.
"""

from __future__ import annotations

import json
import operator
import os
import socket
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import CliAgentError, Message, MissingCredentialsError, ProviderError
from cli_agent.providers import base
from cli_agent.providers.context_fit import estimated_tokens, fitted, over_context

if TYPE_CHECKING:
    import httpx

__all__ = ["OpenAIHTTPProvider"]

# Model prefixes this transport speaks, with the env var holding their key; None: the key is optional.
HTTP_PREFIXES: dict[str, str | None] = {"openai": "OPENAI_API_KEY", "hosted_vllm": None}
LOCAL_DUMMY_KEY = "sk-local-no-key-needed"

# What each HTTP status means, said after "{where}". A 401 is missing credentials; 408, 409, 429 and every 5xx are
# worth retrying; a status without a row is said by its class (4xx: rejected the request, 5xx: failed).
_STATUS_SAYS = {
    400: "rejected the request", 401: "rejected the API key", 403: "refused access",
    404: "has no such model or endpoint", 408: "timed out the request", 409: "reported a conflict",
    413: "found the request too large", 422: "could not process the request", 429: "is rate limiting",
    500: "failed", 502: "had a bad gateway", 503: "is unavailable", 504: "had a gateway timeout", 529: "is overloaded",
}
_RETRIED_CLIENT_STATUSES = frozenset({408, 409, 429})


def _status_rule(status: int, says: str) -> base.Rule:
    key_hint = "; check {env} or --api-key" if status == 401 else ""
    return base.Rule(status, MissingCredentialsError if status == 401 else ProviderError,
                     status in _RETRIED_CLIENT_STATUSES or status >= 500,
                     f"{{where}} {says} (HTTP {{status}}{{retry_after}}){key_hint}: {{detail}}")


STATUS_RULES: tuple[base.Rule, ...] = tuple(_status_rule(status, says) for status, says in _STATUS_SAYS.items())
_OTHER_SERVER_STATUS = _status_rule(500, "failed")
_OTHER_CLIENT_STATUS = _status_rule(400, "rejected the request")

TRANSPORT_RULES: tuple[base.Rule, ...] = (
    base.Rule("TimeoutException", ProviderError, True, "no answer from {where} in time ({detail})"),
    base.Rule("ConnectError", ProviderError, True, "could not connect to {where} ({detail})"),
    base.Rule("NetworkError", ProviderError, True, "lost the connection to {where} ({detail})"),
    base.Rule("RemoteProtocolError", ProviderError, True, "{where} dropped the connection ({detail})"),
    base.Rule("UnsupportedProtocol", ProviderError, False, "cannot reach {where}: unsupported URL ({detail})"),
    base.Rule("InvalidURL", ProviderError, False, "cannot reach {where}: invalid URL ({detail})"),
)
_OTHER_TRANSPORT = base.Rule("HTTPError", ProviderError, False, "the request to {where} failed ({detail})")
_JSON = {"Content-Type": "application/json"}


def status_error(status: int, where: str, detail: str, *, env: str = "the API key variable",
                 retry_after: str | None = None) -> CliAgentError:
    by_status = {rule.match: rule for rule in STATUS_RULES}
    rule = by_status.get(status) or (_OTHER_SERVER_STATUS if status >= 500 else _OTHER_CLIENT_STATUS)
    return base.translate(rule, where=where, detail=detail or "no details", env=env, status=status,
                     retry_after=f", retry after {retry_after}s" if retry_after else "")


class OpenAIHTTPProvider:
    def __init__(self, model: str, *, api_base: str, api_key: str | None = None, max_retries: int = 0,
                 context_window: int | None = None, request_timeout_s: float = 600.0,
                 transport: httpx.BaseTransport | None = None, reasoning_effort: str | None = None) -> None:
        prefix, _, bare = model.partition("/")
        self.model = model
        self.wire_model = bare if prefix in HTTP_PREFIXES and bare else model
        self.api_base = api_base.rstrip("/")
        self.url = f"{self.api_base}/chat/completions"
        self.name = f"{model} via {self.api_base}"
        self._env = HTTP_PREFIXES.get(prefix) or "OPENAI_API_KEY"
        self._key = self._resolve_key(api_key, required=HTTP_PREFIXES.get(prefix, "") is not None)
        self._max_retries = max_retries
        self._context_window = context_window
        self._request_timeout_s = request_timeout_s
        self._transport = transport
        self._extra: dict[str, Any] = {"reasoning_effort": reasoning_effort} if reasoning_effort else {}
        self._client: httpx.Client | None = None
        self._sent: tuple[tuple[Message, ...], bytearray] = ((), bytearray())  # the last request's messages, joined

    def _resolve_key(self, api_key: str | None, *, required: bool) -> str | None:
        key = api_key or os.environ.get(self._env)
        if key:
            return key
        if base.is_local_url(self.api_base) or not required:
            return LOCAL_DUMMY_KEY
        raise MissingCredentialsError(f"no API key for {self.model} at {self.api_base}: set {self._env} "
                                      "or pass --api-key")

    def supports_native_tools(self) -> bool:
        return True

    def notes(self) -> list[str]:
        """Nothing to say of the settings: a server's own model takes `reasoning_effort` or ignores it itself."""
        return []

    def context_window(self) -> int | None:
        return self._context_window

    def preload(self) -> None:
        """Import the transport (httpx and httpcore) before the first request: the REPL calls this in a background
        thread once its prompt is on screen."""
        import_httpx()

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _http(self) -> httpx.Client:
        if self._client is None:
            httpx = import_httpx()
            plain = self.api_base.startswith("http://")  # no TLS: skip loading certificates (~0.1 s)
            # TCP_NODELAY: on a kept-alive connection, the request's headers and body go out as two writes, and
            # Nagle's algorithm would hold the second until the server's delayed ACK (40 ms a request)
            transport = self._transport or httpx.HTTPTransport(
                retries=self._max_retries, verify=not plain,
                socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
            self._client = httpx.Client(transport=transport, trust_env=not base.is_local_url(self.api_base),
                                        headers={"Authorization": f"Bearer {self._key}"})
        return self._client

    def request_body(self, request: base.ProviderRequest) -> dict[str, Any]:
        return {"model": self.wire_model, "messages": [m.to_openai() for m in request.messages],
                **request.chat_params(), **self._extra, **request.options}

    def encoded_body(self, request: base.ProviderRequest) -> bytes:
        """`request_body` as JSON bytes, from each message's own encoding (made once per message, not per step)."""
        rest = json.dumps({"model": self.wire_model, **request.chat_params(), **self._extra, **request.options},
                          ensure_ascii=False, separators=(",", ":"), allow_nan=False).encode()
        return b"".join((b'{"messages":[', self._messages_json(request.messages), b"],", rest[1:]))  # one copy

    def _messages_json(self, messages: tuple[Message, ...]) -> bytearray:
        """The messages as a JSON list body; when they extend the last request's (the same objects, a system
        message equal to it), only the new ones are added to what was joined then (in place: no copy of the rest)."""
        sent, joined = self._sent
        k = len(sent)
        if k and len(messages) >= k and messages[0] == sent[0] and all(map(operator.is_, sent[1:], messages[1:k])):
            for m in messages[k:]:
                joined += b"," + m.openai_json
        else:
            joined = bytearray(b",".join(m.openai_json for m in messages))
        self._sent = (messages, joined)
        return joined

    def stream(self, request: base.ProviderRequest, *,
               watch: Callable[[Iterator[Mapping[str, Any]]], Iterator[Mapping[str, Any]]] | None = None
               ) -> Iterator[str | base.Thinking | base.ProviderReply]:
        """The reply's text as it arrives, then the whole reply. `watch`, given, sees the decoded chunks on their way
        and may end them early (closing what it was given closes the connection). The request is fitted to the
        model's context when it is known (`context_fit`); a server's "over the context" error is answered by fitting
        tighter and sending once more."""
        tools_chars = len(json.dumps(request.tools)) if request.tools else 0
        reserve = int(request.options.get("max_tokens") or 1024)
        if self._context_window:
            request = replace(request, messages=fitted(request.messages, tools_chars, self._context_window,
                                                       reserve)[0])
        body = self.encoded_body(request)

        def refit(detail: str) -> bytes | None:
            share = over_context(detail)
            if share is None:
                return None
            target = int(estimated_tokens(request.messages, tools_chars) * share)
            messages, cut = fitted(request.messages, tools_chars, target, 0)
            return self.encoded_body(replace(request, messages=messages)) if cut else None

        def translate_error(exc: Exception) -> CliAgentError:
            rule = base.rule_for_exception(exc, TRANSPORT_RULES, _OTHER_TRANSPORT)
            return base.translate(rule, where=self.url, detail=base.exception_detail(exc))

        def chunks() -> Iterator[Mapping[str, Any]]:
            produced = self._chunks(body, request.timeout_s, refit)
            return watch(produced) if watch is not None else produced

        return base.relay(chunks, timeout_s=request.timeout_s, where=self.url, translate_error=translate_error)

    def _chunks(self, body: bytes, timeout_s: float | None,
                refit: Callable[[str], bytes | None] | None = None) -> Iterator[Mapping[str, Any]]:
        httpx = import_httpx()
        seconds = self._request_timeout_s if timeout_s is None else min(timeout_s, self._request_timeout_s)
        timeout = httpx.Timeout(seconds, connect=min(seconds, 10.0))
        with self._http().stream("POST", self.url, content=body, headers=_JSON, timeout=timeout) as response:
            if response.status_code >= 400:
                response.read()
                detail = _error_detail(response.text)
                again = refit(detail) if refit is not None and response.status_code == 400 else None
                if again is None:
                    raise status_error(response.status_code, self.url, detail, env=self._env,
                                       retry_after=response.headers.get("retry-after"))
                yield from self._chunks(again, timeout_s)  # over the context: fitted tighter, sent once more
                return
            if "text/event-stream" not in response.headers.get("content-type", ""):
                response.read()  # a server that ignores `stream` answers with one JSON body
                yield _decode(response.text, self.url)
                yield base.END_OF_REPLY
                return
            done = False
            for payload in _sse_data(response.iter_lines()):
                if done or payload.strip() == "[DONE]":
                    if not done:
                        yield base.END_OF_REPLY
                    done = True  # read on to the body's end: a response read whole keeps its connection alive
                    continue
                chunk = _decode(payload, self.url)
                if chunk.get("error"):
                    error = chunk["error"]
                    code = error.get("code") if isinstance(error, dict) else None
                    raise status_error(code if isinstance(code, int) else 500, self.url, _error_detail(payload))
                yield chunk


_NEVER_CALLED = ("httpx._main", "httpcore._sync.http2", "httpcore._async.http2")


def import_httpx() -> Any:
    """httpx and its transport (httpcore), without what a client of plain HTTP/1.1 never calls: httpx's command-line
    client (`httpx._main`: click, rich and pygments, ~60 ms of a one-shot run when they are installed) and
    httpcore's HTTP/2 connections (h2, hpack and hyperframe, ~15 ms; no transport here asks for HTTP/2). Hidden
    during the import, each falls back to its stub; the modules can still be imported afterwards (httpcore imports
    its HTTP/2 connection again where one is negotiated)."""
    hidden = [name for name in _NEVER_CALLED if name.partition(".")[0] not in sys.modules and name not in sys.modules]
    for name in hidden:
        sys.modules[name] = None  # type: ignore[assignment]
    try:  # deferred: httpx and its transport cost ~100 ms with the TLS stack: only a request needs them
        import httpcore  # noqa: F401 - httpx's transport imports it on first use
        import httpx
    finally:
        for name in hidden:
            sys.modules.pop(name, None)
    return httpx


def _sse_data(lines: Iterable[str]) -> Iterator[str]:
    """The data of each server-sent event (its `data:` lines joined); comments and other fields are skipped."""
    data: list[str] = []
    for line in lines:
        if line.startswith("data:"):
            data.append(line[5:].removeprefix(" "))
        elif not line and data:
            yield "\n".join(data)
            data = []
    if data:
        yield "\n".join(data)


def _decode(payload: str, where: str) -> Mapping[str, Any]:
    try:
        value = json.loads(payload)
    except json.JSONDecodeError:
        value = None
    if not isinstance(value, dict):
        raise ProviderError(f"{where} sent something that is not a JSON object: {base.exception_detail(payload, 120)}")
    return value


def _error_detail(text: str) -> str:
    """The message of an OpenAI-style error body, else the start of the body."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError:
        return base.exception_detail(text)
    error = data.get("error", data) if isinstance(data, dict) else data
    if isinstance(error, dict):
        error = error.get("message") or error.get("detail") or error
    return base.exception_detail(error if isinstance(error, str) else json.dumps(error))

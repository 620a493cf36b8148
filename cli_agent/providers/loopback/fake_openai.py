"""Test doubles that ship in the package: a stdlib OpenAI-compatible chat-completions server on 127.0.0.1, for tests
and benchmarks.

    with FakeOpenAIServer([{"text": "hello there"}, {"status": 429, "headers": {"Retry-After": "1"}}]) as server:
        provider = make_provider("openai/fake", api_base=server.url, api_key=None)

Each POST to `/v1/chat/completions` takes the next item of its script, in the format `providers.script` defines
(the one the ScriptedProvider plays too): a reply is streamed as SSE when the request asks for `stream` (text split
into words unless `chunks` fixes the deltas; tool calls as index-based fragments, their arguments cut into small
pieces, the way OpenAI does; `thinking` as `reasoning_content` deltas first, the way DeepSeek and vLLM do), else
sent as one JSON body; an error (`status`, or `error`) is an HTTP error with an OpenAI error body; `close` drops the
connection without a response.

`instant="text"` answers every request (once the queue is empty) with that text, for benchmarks. `context_size=N`
refuses a request whose messages count more than N tokens (4 characters a token) as llama.cpp's server does
(HTTP 400, "request (T tokens) exceeds the available context size (N tokens)"), without taking a scripted item.
With an empty queue and no instant text the server answers 400, so a test that sends one request too many fails
loudly.
Received request bodies are in `.requests`, their headers in `.headers`.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import threading
import time
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cli_agent.providers.reply_script import check_item, item_calls, item_finish, item_text, item_wait, status_of

_ARGUMENT_PIECE = 7  # characters of tool-call arguments per streamed fragment


class FakeOpenAIServer:
    def __init__(self, responses: Iterable[Mapping[str, Any]] = (), *, instant: str | None = None,
                 context_size: int | None = None) -> None:
        self._queue: deque[Mapping[str, Any]] = deque(check_item(n, r) for n, r in enumerate(responses))
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self.instant = instant
        self.context_size = context_size
        self.refused: list[int] = []  # the token counts of the requests refused as over the context
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self._httpd = _Server(self)
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai-server", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def push(self, *responses: Mapping[str, Any]) -> None:
        with self._lock:
            self._queue.extend(check_item(n, r) for n, r in enumerate(responses))

    @property
    def pending(self) -> int:
        with self._lock:
            return len(self._queue)

    def close(self) -> None:
        if not self._stopping.is_set():
            self._stopping.set()
            self._httpd.shutdown()
            self._httpd.close_connections()  # kept-alive connections would hold a handler thread each
            self._httpd.server_close()
            self._thread.join(timeout=5)

    def __enter__(self) -> FakeOpenAIServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, body: dict[str, Any], headers: dict[str, str]) -> Mapping[str, Any]:
        with self._lock:
            self.requests.append(body)
            self.headers.append(headers)
            if self._queue:
                return self._queue.popleft()
        if self.instant is not None:
            return {"text": self.instant}
        return {"status": 400, "message": "fake server: no scripted response left"}

    def _sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, fake: FakeOpenAIServer) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.fake = fake
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def process_request(self, request: Any, client_address: Any) -> None:
        with self._connections_lock:
            self._connections.add(request)
        super().process_request(request, client_address)

    def shutdown_request(self, request: Any) -> None:
        with self._connections_lock:
            self._connections.discard(request)
        super().shutdown_request(request)

    def close_connections(self) -> None:
        with self._connections_lock:
            for connection in self._connections:
                with contextlib.suppress(OSError):
                    connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # as real servers do: else each SSE chunk on a kept-alive connection waits 40 ms
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def handle(self) -> None:
        # A client that gave up (a timeout test, a closed keep-alive connection) needs no answer, and no traceback
        # on stderr: printing one parses source, which races with imports on Python 3.11 (AST recursion error).
        with contextlib.suppress(ConnectionError):
            super().handle()

    def do_POST(self) -> None:
        fake = self.server.fake
        length = int(self.headers.get("Content-Length") or 0)
        try:
            body = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            body = {}
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send_json(404, _error_body(f"fake server: no route {self.path}"))
            return
        tokens = len(json.dumps(body.get("messages", []))) // 4
        if fake.context_size is not None and tokens > fake.context_size:
            fake.refused.append(tokens)
            self._send_json(400, {"error": {"code": 400, "type": "exceed_context_size_error", "message": (
                f"request ({tokens} tokens) exceeds the available context size ({fake.context_size} tokens), try "
                "increasing it")}})
            return
        item = fake._take(body, {k.lower(): v for k, v in self.headers.items()})
        self._answer(fake, item, body)

    def _answer(self, fake: FakeOpenAIServer, item: Mapping[str, Any], body: dict[str, Any]) -> None:
        fake._sleep(item_wait(item))
        if item.get("close"):
            self.close_connection = True
            return
        status = status_of(item)
        if status is not None:
            self._send_json(status, _error_body(item.get("message", "scripted error")), extra=item.get("headers", {}))
            return
        model = str(body.get("model", "fake"))
        if not body.get("stream"):
            self._send_json(200, _completion(item, body, model))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        include_usage = bool((body.get("stream_options") or {}).get("include_usage"))
        for n, chunk in enumerate(_chunks(item, body, model, include_usage)):
            if n and item.get("chunk_delay"):
                fake._sleep(float(item["chunk_delay"]))
            self._write_chunk(b"data: " + chunk.encode() + b"\n\n")
        self._write_chunk(b"data: [DONE]\n\n")
        self._write_chunk(b"")

    def _write_chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, payload: dict[str, Any], extra: Mapping[str, str] = {}) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in extra.items():
            self.send_header(key, str(value))
        self.end_headers()
        self.wfile.write(data)


def _error_body(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_error", "code": None}}


def _calls(item: Mapping[str, Any]) -> list[dict[str, Any]]:
    return [{"id": call_id or f"call_{n}", "name": name, "arguments": raw}
            for n, (call_id, name, raw) in enumerate(item_calls(item))]


def _usage(item: Mapping[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    given = dict(item.get("usage") or {})
    completion = len(item_text(item)) + sum(len(c["arguments"]) for c in _calls(item))
    prompt = given.get("prompt_tokens", max(1, len(json.dumps(body.get("messages", []))) // 4))
    done = given.get("completion_tokens", max(1, completion // 4))
    details = {"prompt_tokens_details": given["prompt_tokens_details"]} if "prompt_tokens_details" in given else {}
    return {"prompt_tokens": prompt, "completion_tokens": done, "total_tokens": prompt + done, **details}


def _completion(item: Mapping[str, Any], body: dict[str, Any], model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": item_text(item) or None}
    if item.get("thinking"):
        message["reasoning_content"] = item["thinking"]
    calls = _calls(item)
    if calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": c["arguments"]}} for c in calls]
    return {"id": "chatcmpl-fake", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": item_finish(item)}],
            "usage": _usage(item, body)}


def _chunks(item: Mapping[str, Any], body: dict[str, Any], model: str, include_usage: bool) -> Iterator[str]:
    def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
        choice = {"index": 0, "delta": delta, "finish_reason": finish}
        return json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                           "model": model, "choices": [choice]})

    yield chunk({"role": "assistant", "content": ""})
    for piece in re.findall(r"\s*\S+\s*", str(item.get("thinking") or "")):  # as DeepSeek and vLLM stream it
        yield chunk({"reasoning_content": piece})
    text = item_text(item)
    for piece in item.get("chunks") or re.findall(r"\s*\S+\s*", text) or ([text] if text else []):
        yield chunk({"content": piece})
    for n, call in enumerate(_calls(item)):
        yield chunk({"tool_calls": [{"index": n, "id": call["id"], "type": "function",
                                     "function": {"name": call["name"], "arguments": ""}}]})
        raw = call["arguments"]
        for start in range(0, len(raw), _ARGUMENT_PIECE):
            piece = raw[start:start + _ARGUMENT_PIECE]
            yield chunk({"tool_calls": [{"index": n, "function": {"arguments": piece}}]})
    yield chunk({}, item_finish(item))
    if include_usage:
        yield json.dumps({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 0,
                          "model": model, "choices": [], "usage": _usage(item, body)})

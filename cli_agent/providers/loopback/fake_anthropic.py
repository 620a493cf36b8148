"""A test double that ships in the package: an Anthropic Messages server on 127.0.0.1 that streams its replies as
server-sent events, keeps a prompt cache as Anthropic does, and holds signed thinking to Anthropic's rules. LiteLLM
reaches it as `anthropic/MODEL` with `api_base` set to its `url`.

    with FakeAnthropicServer([{"thinking": "look first", "tool_calls": [...]}, {"text": "done"}]) as server:
        provider = LiteLLMProvider("anthropic/claude-sonnet-4-5", api_base=server.url, api_key="k")

Each POST to `/v1/messages` takes the next item of its script (the format of `providers.reply_script`): the events
are `message_start` (with the usage's input, cache-read and cache-write tokens), a `thinking` block (`thinking_delta`s
then a `signature_delta`), a `text` block, a `tool_use` block per call (`input_json_delta`s), `message_delta` (the
stop reason and output tokens) and `message_stop`. An item with `status` answers with that HTTP error.

The cache: a request's blocks are counted in order (tools, system, messages; a token is 4 characters of the block's
JSON). Each `cache_control` breakpoint whose prefix is at least `min_cache_tokens` long is written; the longest
prefix written before that ends at a breakpoint or up to 20 blocks before one is read back. A request that sends
back a thinking block whose signature this server did not give, or changed, or asks for thinking with a temperature
other than 1, is refused with a 400, as Anthropic refuses it. Received bodies are in `.requests`; `.usages` holds
the usage each reply reported.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from cli_agent.providers.reply_script import check_item, item_calls, item_text, status_of

LOOKBACK = 20  # blocks before a breakpoint that Anthropic checks for an earlier cache entry
_STOP = {"stop": "end_turn", "tool_calls": "tool_use", "length": "max_tokens"}


class FakeAnthropicServer:
    def __init__(self, responses: Iterable[Mapping[str, Any]] = (), *, min_cache_tokens: int = 1024) -> None:
        self._queue: deque[Mapping[str, Any]] = deque(check_item(n, r) for n, r in enumerate(responses))
        self._lock = threading.Lock()
        self.min_cache_tokens = min_cache_tokens
        self.requests: list[dict[str, Any]] = []
        self.usages: list[dict[str, int]] = []
        self._cache: dict[str, int] = {}  # sha256 of a cached prefix -> its tokens
        self._signatures: dict[str, str] = {}  # signature -> the thinking it signed
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.daemon_threads = True
        self._httpd.fake = self  # type: ignore[attr-defined]
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-anthropic-server", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}"

    def push(self, *responses: Mapping[str, Any]) -> None:
        with self._lock:
            self._queue.extend(check_item(n, r) for n, r in enumerate(responses))

    def close(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeAnthropicServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _take(self, body: dict[str, Any]) -> tuple[Mapping[str, Any], dict[str, int]]:
        """The next item, and the usage of its prompt (the cache read and written on the way)."""
        with self._lock:
            self.requests.append(body)
            refused = self._refused(body)
            if refused:
                return {"status": 400, "message": refused}, {}
            item = self._queue.popleft() if self._queue else {"status": 400, "message": "no scripted response left"}
            usage = self._prompt_usage(body)
            return item, usage

    def _refused(self, body: dict[str, Any]) -> str:
        """Why Anthropic would refuse the request ("" when it would not): thinking with a temperature other than 1,
        or a thinking block sent back changed."""
        if (body.get("thinking") or {}).get("type") == "enabled" and body.get("temperature", 1) != 1:
            return "temperature may only be set to 1 when thinking is enabled"
        for message in body.get("messages") or ():
            for block in message.get("content") if isinstance(message.get("content"), list) else ():
                if isinstance(block, dict) and block.get("type") == "thinking" \
                        and self._signatures.get(str(block.get("signature"))) != block.get("thinking"):
                    return "messages: a thinking block's signature does not match its thinking"
        return ""

    def _prompt_usage(self, body: dict[str, Any]) -> dict[str, int]:
        blocks = _blocks(body)
        sizes = [max(1, len(json.dumps(_unmarked(b), sort_keys=True)) // 4) for b in blocks]
        ends = [sum(sizes[:n + 1]) for n in range(len(sizes))]
        keys = [_prefix_key(blocks[:n + 1]) for n in range(len(blocks))]
        marks = [n for n, block in enumerate(blocks) if isinstance(block, dict) and block.get("cache_control")]
        read = max((ends[n] for mark in marks for n in range(max(0, mark - LOOKBACK), mark + 1)
                    if keys[n] in self._cache), default=0)
        written = 0
        for mark in marks:
            if ends[mark] >= self.min_cache_tokens and keys[mark] not in self._cache:
                self._cache[keys[mark]] = ends[mark]
                written = max(written, ends[mark] - read)
        total = ends[-1] if ends else 0
        return {"input_tokens": total - read - written, "cache_read_input_tokens": read,
                "cache_creation_input_tokens": written}

    def _sign(self, thinking: str) -> str:
        signature = hashlib.sha256(b"fake-anthropic:" + thinking.encode()).hexdigest()
        with self._lock:
            self._signatures[signature] = thinking
        return signature


def _blocks(body: dict[str, Any]) -> list[Any]:
    """The request's cacheable blocks in Anthropic's order: tools, system, then each message's content blocks."""
    system = body.get("system")
    out: list[Any] = list(body.get("tools") or ())
    out += system if isinstance(system, list) else [{"type": "text", "text": system}] if system else []
    for message in body.get("messages") or ():
        content = message.get("content")
        for block in content if isinstance(content, list) else [{"type": "text", "text": content}]:
            out.append({"role": message.get("role"), **block} if isinstance(block, dict) else block)
    return out


def _unmarked(block: Any) -> Any:
    return {k: v for k, v in block.items() if k != "cache_control"} if isinstance(block, dict) else block


def _prefix_key(blocks: list[Any]) -> str:
    return hashlib.sha256(json.dumps([_unmarked(b) for b in blocks], sort_keys=True).encode()).hexdigest()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def do_POST(self) -> None:
        fake: FakeAnthropicServer = self.server.fake  # type: ignore[attr-defined]
        try:
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        except json.JSONDecodeError:
            body = {}
        if not self.path.rstrip("/").endswith("/messages"):
            self._send_json(404, _error(f"no route {self.path}"))
            return
        item, usage = fake._take(body)
        status = status_of(item)
        if status is not None:
            self._send_json(status, _error(str(item.get("message", "scripted error"))))
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for name, data in _events(fake, item, usage, str(body.get("model", "claude"))):
            self._write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self._write(b"")

    def _write(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def _send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def _error(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


def _events(fake: FakeAnthropicServer, item: Mapping[str, Any], usage: dict[str, int],
            model: str) -> Iterator[tuple[str, dict[str, Any]]]:
    output = 0
    yield "message_start", {"type": "message_start", "message": {
        "id": f"msg_fake_{len(fake.requests)}", "type": "message", "role": "assistant", "content": [], "model": model,
        "stop_reason": None, "stop_sequence": None, "usage": {**usage, "output_tokens": 1}}}
    index = 0
    thinking = str(item.get("thinking") or "")
    if thinking:
        yield from _block(index, {"type": "thinking", "thinking": "", "signature": ""},
                          [{"type": "thinking_delta", "thinking": piece} for piece in _pieces(thinking)]
                          + [{"type": "signature_delta", "signature": fake._sign(thinking)}])
        index, output = index + 1, output + len(thinking) // 4
    text = item_text(item)
    if text:
        yield from _block(index, {"type": "text", "text": ""},
                          [{"type": "text_delta", "text": piece} for piece in _pieces(text)])
        index, output = index + 1, output + len(text) // 4
    for n, (call_id, name, raw) in enumerate(item_calls(item)):
        yield from _block(index, {"type": "tool_use", "id": call_id or f"toolu_fake_{len(fake.requests)}_{n}",
                                  "name": name, "input": {}},
                          [{"type": "input_json_delta", "partial_json": raw[i:i + 16]} for i in range(0, len(raw), 16)])
        index, output = index + 1, output + len(raw) // 4
    stop = _STOP.get(str(item.get("finish_reason") or ("tool_calls" if item.get("tool_calls") else "stop")), "end_turn")
    usage_out = {**usage, "output_tokens": max(1, output)}
    fake.usages.append(usage_out)
    yield "message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                            "usage": {"output_tokens": usage_out["output_tokens"]}}
    yield "message_stop", {"type": "message_stop"}


def _block(index: int, start: dict[str, Any], deltas: list[dict[str, Any]]) -> Iterator[tuple[str, dict[str, Any]]]:
    yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
    for delta in deltas:
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
    yield "content_block_stop", {"type": "content_block_stop", "index": index}


def _pieces(text: str, size: int = 12) -> list[str]:
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]

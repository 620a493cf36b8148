"""The protocol's wire: newline-delimited JSON-RPC 2.0 on stdin and stdout, and logs on stderr.

`StdioWire` is a message transport for the SDK's connection. A line that is not a JSON-RPC message (not JSON, not
an object, no method and no id, a batch) is answered here with its JSON-RPC error (-32700 parse error, -32600
invalid request) and never reaches the SDK, so the process stays up and stdout carries nothing else. The SDK's own
complaints go through `log_to_stderr`'s one-line handler: a message, never a traceback. `stdio_streams` opens
stdin and stdout as streams whatever they are: pipes, sockets and terminals through the event loop, regular files
(`cli-agent acp < requests > replies`) read in a thread and written in place.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import threading
from typing import Any

LINE_LIMIT = 50 * 1024 * 1024  # the longest message taken (the SDK's own default: prompts may embed files)
_ID_TYPES = (str, int, type(None))


def problem(message: Any) -> str | None:
    """What makes a decoded line an invalid JSON-RPC 2.0 message (None: it is a request, notification or
    response)."""
    if not isinstance(message, dict):
        return "a message must be a JSON object (batches are not supported)"
    if message.get("jsonrpc") != "2.0":
        return 'jsonrpc must be "2.0"'
    if "id" in message and (not isinstance(message["id"], _ID_TYPES) or isinstance(message["id"], bool)):
        return "id must be a string, a number or null"
    if "method" in message:
        if not isinstance(message["method"], str) or not message["method"]:
            return "method must be a non-empty string"
        if message.get("params") is not None and not isinstance(message["params"], dict | list):
            return "params must be an object or an array"
        return None
    if "id" not in message:
        return "a message needs a method (a request or notification) or an id (a response)"
    if "result" not in message and "error" not in message:
        return "a response needs a result or an error"
    return None


class StdioWire:
    """JSON-RPC messages over a stream pair, one message a line (the SDK's `Transport`)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False
        self._cut = False  # the reader dropped the start of an over-long line: its rest is dropped too

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the connection is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> dict[str, Any] | None:
        """The next valid message; None at the end of input."""
        while True:
            try:
                line = await self._reader.readline()
            except ValueError as exc:  # longer than LINE_LIMIT: the reader has dropped it (or its start)
                if not self._cut:
                    await self._error(None, -32600, f"Invalid request: a message longer than {LINE_LIMIT} bytes")
                self._cut = "not found" in str(exc)  # asyncio's words when the line's end is still to come
                continue
            except (ConnectionError, OSError):
                return None
            if not line:
                return None
            if self._cut:  # the end of the over-long line
                self._cut = False
                continue
            text = line.strip()
            if not text:
                continue
            try:
                message = json.loads(text)
            except (ValueError, RecursionError) as exc:
                await self._error(None, -32700, f"Parse error: {exc}")
                continue
            wrong = problem(message)
            if wrong is None:
                return message  # type: ignore[no-any-return]
            ident = message.get("id") if isinstance(message, dict) else None
            await self._error(ident if isinstance(ident, str | int) and not isinstance(ident, bool) else None,
                              -32600, f"Invalid request: {wrong}")

    async def _error(self, ident: str | int | None, code: int, message: str) -> None:
        logging.getLogger("cli_agent.serve.acp").warning("%s", message)
        with contextlib.suppress(ConnectionError, OSError):
            await self.send({"jsonrpc": "2.0", "id": ident, "error": {"code": code, "message": message}})

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            with contextlib.suppress(ConnectionError, OSError, RuntimeError):
                self._writer.close()


def _is_file(fd: int) -> bool:
    """Whether `fd` is a regular file (or anything else the event loop's pipe transports refuse)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode))


class _FileWriter(asyncio.BaseProtocol, asyncio.WriteTransport):
    """stdout when it is a regular file: each message written whole, in place (a file never blocks for long)."""

    def __init__(self, fd: int) -> None:
        super().__init__()
        self._fd = fd
        self._closing = False

    def write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data)
        while view and not self._closing:
            view = view[os.write(self._fd, view):]

    def is_closing(self) -> bool:
        return self._closing

    def close(self) -> None:
        self._closing = True

    async def _drain_helper(self) -> None:  # what StreamWriter.drain awaits: nothing is ever buffered
        return None


def _feed_in_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    """stdin when it is a regular file: read in a daemon thread and fed to `reader`."""
    def read() -> None:
        try:
            while data := os.read(fd, 1 << 16):
                loop.call_soon_threadsafe(reader.feed_data, data)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=read, name="acp-stdin", daemon=True).start()


async def stdio_streams(limit: int = LINE_LIMIT) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """stdin and stdout as a stream pair, whether they are pipes, sockets, terminals or regular files."""
    from acp import stdio_streams as pipe_streams  # deferred: the ACP SDK's models (0.4 s), only for `cli-agent acp`

    stdin, stdout = sys.stdin.fileno(), sys.stdout.fileno()
    if not _is_file(stdin) and not _is_file(stdout):
        return await pipe_streams(limit=limit)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    if _is_file(stdin):
        _feed_in_thread(loop, reader, stdin)
    else:
        protocol = asyncio.StreamReaderProtocol(reader)
        await loop.connect_read_pipe(lambda: protocol, sys.stdin)
    if _is_file(stdout):
        sink = _FileWriter(stdout)
        return reader, asyncio.StreamWriter(sink, sink, None, loop)
    pipe = asyncio.StreamReaderProtocol(asyncio.StreamReader())  # gives StreamWriter the flow control it awaits
    transport, _ = await loop.connect_write_pipe(lambda: pipe, sys.stdout)
    return reader, asyncio.StreamWriter(transport, pipe, None, loop)


class _OneLine(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        text = f"cli-agent acp: {record.getMessage()}"
        if record.exc_info and record.exc_info[1] is not None:
            exc = record.exc_info[1]
            text += f": {type(exc).__name__}: {exc}"
        return " ".join(text.split("\n"))


def log_to_stderr() -> None:
    """Every log record, the SDK's included, as one line on stderr."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_OneLine())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)

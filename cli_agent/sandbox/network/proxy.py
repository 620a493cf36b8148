"""The proxy cli-agent runs outside the sandbox: HTTP CONNECT and plain HTTP, on a Unix socket a command's relay
reaches (`relay`). Each connection's destination is judged by the gate (the session's rules, or the user's answer),
then resolved and checked here (`open_checked`: never a loopback, private or link-local address a rule does not
name), and the proxy connects to the address it checked. Every connection, allowed or refused, is recorded.

One thread accepts; each connection has a thread of its own that reads the request head (64 KiB at most, within
30 s), answers 403 with the reason when refused, and then copies bytes both ways until either side closes.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import threading
from typing import Protocol
from urllib.parse import urlsplit

from cli_agent.contracts import ToolError, dataclass
from cli_agent.sandbox.network.address import Resolver, open_checked

_HEAD_MAX = 64 * 1024
_HEAD_TIMEOUT_S = 30.0
_CONNECT_TIMEOUT_S = 15.0
_CHUNK = 1 << 16
_IDLE_S = 600.0  # a connection silent both ways this long is closed
_HOP_HEADERS = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")


@dataclass(frozen=True)
class Connection:
    """One connection a command asked the proxy for."""

    host: str
    port: int
    allowed: bool
    why: str  # the rule or answer that allowed it, or why it was refused (one line)


class Gate(Protocol):
    resolve: Resolver

    def decide(self, host: str, port: int) -> tuple[bool, str]: ...
    def names_address(self, host: str, port: int, address: str) -> bool: ...
    def record(self, connection: Connection) -> None: ...


class NetProxy:
    """Listens on `path` (a Unix socket) until `close`."""

    def __init__(self, path: str, gate: Gate) -> None:
        self.path, self.gate = path, gate
        self._server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._server.bind(path)
        os.chmod(path, 0o600)
        self._server.listen(128)
        self._closed = False
        self._thread = threading.Thread(target=self._accept, name="cli-agent-net-proxy", daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._closed = True
        with contextlib.suppress(OSError):
            self._server.shutdown(socket.SHUT_RDWR)
        self._server.close()
        with contextlib.suppress(OSError):
            os.unlink(self.path)

    def _accept(self) -> None:
        while not self._closed:
            try:
                client, _ = self._server.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        try:
            client.settimeout(_HEAD_TIMEOUT_S)
            head, rest = _read_head(client)
            method, host, port, forward = _target(head)
            upstream = self._open(host, port)
            if upstream is None:
                client.sendall(b"HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                return
            if method == b"CONNECT":
                client.sendall(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            else:
                upstream.sendall(forward)
            if rest:
                upstream.sendall(rest)
            _pump(client, upstream)
        except (OSError, ValueError):
            with contextlib.suppress(OSError):
                client.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
        finally:
            client.close()
            if upstream is not None:
                upstream.close()

    def _open(self, host: str, port: int) -> socket.socket | None:
        allowed, why = self.gate.decide(host, port)
        if not allowed:
            self.gate.record(Connection(host, port, False, why))
            return None
        try:
            upstream = open_checked(host, port, _CONNECT_TIMEOUT_S,
                                    lambda address: self.gate.names_address(host, port, address),
                                    resolve=self.gate.resolve)
        except ToolError as exc:
            self.gate.record(Connection(host, port, False, exc.message))
            return None
        self.gate.record(Connection(host, port, True, why))
        return upstream


def _read_head(sock: socket.socket) -> tuple[bytes, bytes]:
    data = b""
    while b"\r\n\r\n" not in data:
        if len(data) > _HEAD_MAX:
            raise ValueError("request head too long")
        chunk = sock.recv(_CHUNK)
        if not chunk:
            raise ValueError("connection closed before the request head ended")
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    return head, rest


def _target(head: bytes) -> tuple[bytes, str, int, bytes]:
    """The method, host and port a request head asks for, and the head to send on (plain HTTP: origin-form, the
    proxy's own headers dropped, one request per connection)."""
    line, *headers = head.split(b"\r\n")
    method, target, version = line.split(b" ")
    if method == b"CONNECT":
        host, sep, port = target.decode("ascii").rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError("CONNECT needs host:port")
        return method, host.strip("[]").lower(), int(port), b""
    url = urlsplit(target.decode("ascii"))
    if url.scheme != "http" or not url.hostname:
        raise ValueError("a proxy request names an http:// URL")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [h for h in headers if h.split(b":", 1)[0].strip().lower() not in _HOP_HEADERS]
    forward = b"\r\n".join([b" ".join((method, path.encode("ascii"), version)), *kept, b"Connection: close"])
    return method, url.hostname.lower(), url.port or 80, forward + b"\r\n\r\n"


def _pump(a: socket.socket, b: socket.socket) -> None:
    """Copy bytes both ways until both sides have finished sending (a half-close is passed on) or both are idle."""
    a.settimeout(None)
    b.settimeout(None)
    open_ends = {a: b, b: a}
    while open_ends:
        ready, _, _ = select.select(list(open_ends), [], [], _IDLE_S)
        if not ready:
            return
        for src in ready:
            data = src.recv(_CHUNK)
            dst = open_ends[src]
            if data:
                dst.sendall(data)
                continue
            del open_ends[src]
            with contextlib.suppress(OSError):
                dst.shutdown(socket.SHUT_WR)

"""One GET over http or https, following at most `max_redirects` redirects (each checked as the first URL is),
reading at most `max_bytes` of the body before `deadline`: one deadline for the whole fetch (connect, TLS, status
line, headers, every body read and every redirect), checked on every read of the socket, so a server that drips
its answer a byte at a time is cut at the deadline, not at a per-read timeout. A redirect is followed on the same
host only: one to another host ends the fetch with the URL it points to, which the model fetches in a call of its
own (asked for, or allowed by a grant, for that host: a grant is for one host, redirects included).

Connections go through the sandbox's `open_checked`, but for a host that is loopback only when private addresses are
allowed and commands run in the session's network namespace (`net`): then the connection is made inside it first
(`SessionNet.reach_loopback`), where a server a command of the session started listens, and only where nothing
listens there on this machine's own loopback (a dev server of the user's). https verifies the certificate for the
URL's host name (SNI and the Host header say the name, the socket goes to the checked address). Nothing is sent
but the request line and a few plain headers: no cookies, no credentials, no proxy.
"""

from __future__ import annotations

import functools
import http.client
import io
import ipaddress
import socket
import ssl
import time
import zlib
from urllib.parse import urljoin, urlsplit

from cli_agent.contracts import ToolError, dataclass
from cli_agent.sandbox import SessionNet, embedded_ipv4, open_checked, refusal, resolved
from cli_agent.tools.web.address import PRIVATE_HINT, WebSetup, host_of

_REDIRECTS = (301, 302, 303, 307, 308)
_USER_AGENT = "cli-agent-web-fetch/1"


@dataclass(frozen=True)
class Fetched:
    url: str  # the last URL, after redirects
    status: int
    reason: str
    content_type: str
    charset: str | None
    body: bytes
    truncated: bool
    redirects: tuple[str, ...]


def _checked_url(url: str) -> tuple[str, str, int, str]:
    """(scheme, host, port, path with query) of an http(s) URL; ToolError for anything else."""
    try:
        parts = urlsplit(url.strip())
        port = parts.port
    except ValueError as exc:
        raise ToolError(f"not a valid URL: {url!r} ({exc})") from None
    if parts.scheme not in ("http", "https"):
        raise ToolError(f"only http and https URLs can be fetched, not {parts.scheme or 'a URL without a scheme'}: "
                        f"{url!r}")
    if not parts.hostname:
        raise ToolError(f"the URL names no host: {url!r}")
    if parts.username or parts.password:
        raise ToolError("URLs with credentials in them are refused")
    if any(c in url for c in "\r\n\0 \t"):
        raise ToolError("the URL contains whitespace or control characters")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.scheme, parts.hostname, port or (443 if parts.scheme == "https" else 80), path


def _hint(allow_private: bool) -> str:
    return "" if allow_private else PRIVATE_HINT


class _Reader(io.RawIOBase):
    """The socket's bytes (through its own file, which keeps it open while the response is read), each read given
    only the time left before the deadline."""

    def __init__(self, file: io.BufferedReader, sock: socket.socket, deadline: float) -> None:
        self.file, self.sock, self.deadline = file, sock, deadline
        self.socket_file: io.RawIOBase = file.raw  # type: ignore[assignment]  # socket.SocketIO

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("timed out")
        self.sock.settimeout(left)
        return self.socket_file.readinto(buffer) or 0

    def close(self) -> None:
        self.file.close()
        super().close()


class _Response(http.client.HTTPResponse):
    def __init__(self, sock: socket.socket, debuglevel: int = 0, method: str | None = None, url: str | None = None,
                 *, deadline: float) -> None:
        super().__init__(sock, debuglevel, method, url)
        self.fp = io.BufferedReader(_Reader(self.fp, sock, deadline))  # nothing was read through it yet


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


def _loopback(address: str) -> bool:
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    inner = embedded_ipv4(ip) if isinstance(ip, ipaddress.IPv6Address) else None
    return ip.is_loopback or (inner is not None and inner.is_loopback)


def _opened(host: str, port: int, deadline: float, allow_private: bool, net: SessionNet | None) -> socket.socket:
    """A socket connected to `host`: when `host` is loopback only, private addresses are allowed and commands have
    a network of the session's (`net`), inside its namespace first (a server a command started), else this
    machine's; otherwise through `open_checked`."""
    if not allow_private or net is None:
        return open_checked(host, port, _left(deadline), allow_private, hint=_hint(allow_private))
    addresses = resolved(host, port)
    if not all(_loopback(address) for _, address in addresses):
        return open_checked(host, port, _left(deadline), allow_private, resolve=lambda *_: addresses)
    try:
        return net.reach_loopback(host, [address for _, address in addresses], port, _left(deadline))
    except ToolError as inside:
        try:  # nothing of the session's there: this machine's own (a dev server of yours)
            return open_checked(host, port, _left(deadline), allow_private, resolve=lambda *_: addresses)
        except ToolError as outside:
            raise ToolError(f"{inside}; nor on this machine's loopback: {outside}") from None


class _Http(http.client.HTTPConnection):
    allow_private = False
    deadline = float("inf")
    net: SessionNet | None = None

    def connect(self) -> None:
        self.sock = _opened(self.host, self.port, self.deadline, self.allow_private, self.net)


class _Https(http.client.HTTPSConnection):
    allow_private = False
    deadline = float("inf")
    net: SessionNet | None = None

    def connect(self) -> None:
        sock = _opened(self.host, self.port, self.deadline, self.allow_private, self.net)
        sock.settimeout(_left(self.deadline))  # the handshake gets what is left
        context: ssl.SSLContext = self._context  # type: ignore[attr-defined]
        self.sock = context.wrap_socket(sock, server_hostname=self.host)


def fetch(url: str, setup: WebSetup, deadline: float, net: SessionNet | None = None) -> Fetched:
    """GET `url`, following redirects; ToolError for what the model can act on (a refused address, a bad URL, a
    timeout, too many redirects). `net`: the session's network, whose loopback a loopback URL reaches."""
    redirects: list[str] = []
    started = time.monotonic()
    while True:
        scheme, host, port, path = _checked_url(url)
        left = deadline - time.monotonic()
        if left <= 0:
            raise ToolError(f"web_fetch timed out after {time.monotonic() - started:.1f} s")
        kind = _Https if scheme == "https" else _Http
        conn = kind(host, port, timeout=left)
        conn.allow_private, conn.deadline, conn.net = setup.allow_private, deadline, net
        conn.response_class = functools.partial(_Response, deadline=deadline)  # type: ignore[assignment]
        try:
            fetched = _get(conn, host, path, url, setup, deadline)
        except (OSError, http.client.HTTPException) as exc:
            if isinstance(exc, TimeoutError) or "timed out" in str(exc):
                raise ToolError(f"web_fetch timed out after {time.monotonic() - started:.1f} s fetching {url}"
                                ) from None
            raise ToolError(f"fetching {url} failed: {type(exc).__name__}: {exc}") from None
        finally:
            conn.close()
        if isinstance(fetched, Fetched):
            return Fetched(**{**fetched.__dict__, "redirects": tuple(redirects)})
        if len(redirects) >= setup.max_redirects:
            raise ToolError(f"more than {setup.max_redirects} redirects, the last to {fetched}")
        if host_of(fetched) != host_of(url):
            _refused(fetched, setup.allow_private)  # a place no call may fetch is said as such
            raise ToolError(f"{url} redirects to {fetched}, on another host: web_fetch follows redirects on the same "
                            "host only; fetch that URL with a call of its own if you need it", url=url,
                            moved_to=fetched)
        url = fetched
        redirects.append(url)


def _refused(url: str, allow_private: bool) -> None:
    """ToolError when `url` is not an http(s) URL, or its host is an address web_fetch may not reach."""
    _, host, port, _ = _checked_url(url)
    for _, address in resolved(host, port):
        why = refusal(address, allow_private)
        if why is not None:
            where = "" if host.strip("[]") == address else f"{host} resolves to {address}: "
            tip = "" if "link-local" in why else f" ({_hint(allow_private)})" if _hint(allow_private) else ""
            raise ToolError(f"refused: {where}{why}{tip}")


def _get(conn: http.client.HTTPConnection, host: str, path: str, url: str, setup: WebSetup,
         deadline: float) -> Fetched | str:
    """The response, or the URL a redirect points to."""
    name = f"[{host}]" if ":" in host else host
    conn.request("GET", path, headers={"Host": name if conn.port == conn.default_port else f"{name}:{conn.port}",
                                       "User-Agent": _USER_AGENT, "Accept-Encoding": "gzip, identity",
                                       "Accept": "text/html, text/*;q=0.9, application/json;q=0.8, */*;q=0.5"})
    response = conn.getresponse()
    location = response.getheader("Location")
    if response.status in _REDIRECTS and location:
        return urljoin(url, location.strip())
    body, truncated = _body(response, setup, deadline, conn)
    content_type = (response.getheader("Content-Type") or "").split(";")[0].strip().lower()
    return Fetched(url=url, status=response.status, reason=response.reason, content_type=content_type,
                   charset=response.headers.get_content_charset(), body=body, truncated=truncated, redirects=())


def _body(response: http.client.HTTPResponse, setup: WebSetup, deadline: float,
          conn: http.client.HTTPConnection) -> tuple[bytes, bool]:
    """At most `max_bytes` of the body (decompressed when gzip), read before the deadline."""
    gzip = (response.getheader("Content-Encoding") or "").strip().lower() in ("gzip", "x-gzip")
    inflate = zlib.decompressobj(16 + zlib.MAX_WBITS) if gzip else None
    out = bytearray()
    while len(out) <= setup.max_bytes:
        _left(deadline)  # each read of the socket also keeps the deadline (`_Reader`)
        chunk = response.read1(64 * 1024)
        if not chunk:
            break
        if inflate is not None:
            try:
                chunk = inflate.decompress(chunk, setup.max_bytes + 1 - len(out))
            except zlib.error as exc:
                raise ToolError(f"the page's gzip encoding is broken: {exc}") from None
        out += chunk
    truncated = len(out) > setup.max_bytes
    return bytes(out[:setup.max_bytes]), truncated

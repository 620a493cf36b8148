"""Which addresses web_fetch may reach, and the one way it connects: resolve the name, check every address it
resolved to, connect to a checked address itself, and check the peer of the open socket once more.

The name is resolved once, here, and the connection goes to the address that was checked, never to the name: a
DNS answer that changes between the check and the connection (DNS rebinding) cannot lead it anywhere else.
Environment proxies are not used, so the address checked is the address reached. `WebSetup` is what the user's
settings allow web_fetch (which addresses, how many redirects, how much, how long); `host_of` is a URL's host.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from cli_agent.contracts import ToolError

__all__ = ["WebSetup", "host_of"]


@dataclass(frozen=True)
class WebSetup:
    """How web_fetch reaches the web. `allow_private` comes from the user config only (`[web] allow_private`)."""

    allow_private: bool = False
    max_redirects: int = 5
    max_bytes: int = 5 * 1024 * 1024  # of the body, after any decompression
    timeout_s: float = 30.0  # the whole fetch, redirects included


def host_of(url: str) -> str:
    """The host name of `url`, lower-case ("" when it has none)."""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""


def refusal(address: str, allow_private: bool) -> str | None:
    """Why `address` (an IP address as text) may not be reached, or None when it may. `allow_private` (the user's
    `[web] allow_private`) lets loopback and private networks through (a local dev server, a LAN wiki), never
    link-local ones."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.is_link_local:  # refused even when private addresses are allowed: cloud metadata services live there
        return f"{ip} is a link-local address (where cloud metadata services answer), never reached"
    if allow_private:
        return None
    if ip.is_loopback:
        return f"{ip} is a loopback address"
    if ip.is_private or not ip.is_global or ip.is_multicast:
        return f"{ip} is a private or reserved address"
    return None


def _resolved(host: str, port: int) -> list[tuple[int, str]]:
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve {host!r}: {getattr(exc, 'strerror', None) or exc}") from None
    return list(dict.fromkeys((family, str(sockaddr[0])) for family, _, _, _, sockaddr in infos))


def open_checked(host: str, port: int, timeout: float, allow_private: bool) -> socket.socket:
    """A socket connected to an address of `host` that may be reached; ToolError naming the address and why when
    none may (a name that resolves to a private address among public ones is refused whole)."""
    addresses = _resolved(host, port)
    for _, address in addresses:
        why = refusal(address, allow_private)
        if why is not None:
            hint = "" if allow_private or "link-local" in why else \
                " ([web] allow_private = true in your user config allows it)"
            where = "" if host.strip("[]") == address else f"{host} resolves to {address}: "
            raise ToolError(f"refused: {where}{why}{hint}")
    last: OSError | None = None
    for family, address in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(max(timeout, 0.001))
        try:
            sock.connect((address, port))
            peer = str(sock.getpeername()[0])
            why = refusal(peer, allow_private)
            if why is not None:
                raise ToolError(f"refused: the connection to {host} reached {peer}: {why}")
            return sock
        except OSError as exc:
            sock.close()
            last = exc
        except ToolError:
            sock.close()
            raise
    raise ToolError(f"cannot connect to {host}:{port}: {getattr(last, 'strerror', None) or last}")

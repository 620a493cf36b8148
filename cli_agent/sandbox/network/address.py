"""Which addresses may be reached, and the one way to connect: resolve the name, check every address it resolved
to, connect to a checked address itself, and check the peer of the open socket once more.

The name is resolved once, here, and the connection goes to the address that was checked, never to the name: a
DNS answer that changes between the check and the connection (DNS rebinding) cannot lead it anywhere else. An IPv6
address that carries an IPv4 one (IPv4-mapped `::ffff:a.b.c.d`, IPv4-compatible `::a.b.c.d`, IPv4-translated
`::ffff:0:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4 `2002::/16`, Teredo) is judged by the IPv4 address it carries too:
on an IPv6-only cloud `[64:ff9b::a9fe:a9fe]` is 169.254.169.254. web_fetch and the command sandbox's proxy use it.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable

from cli_agent.contracts import ToolError

__all__ = ["Resolver", "embedded_ipv4", "open_checked", "refusal", "resolved"]

Resolver = Callable[[str, int], list[tuple[int, str]]]  # (host, port) -> [(family, address)], OSError when none

_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_TRANSLATED = ipaddress.ip_network("::ffff:0:0:0/96")
_LOW32 = 0xFFFFFFFF


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, translated, NAT64, 6to4, Teredo), or None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    value = int(ip)
    if 1 < value <= _LOW32 or ip in _TRANSLATED or any(ip in net for net in _NAT64):  # ::a.b.c.d and the like
        return ipaddress.IPv4Address(value & _LOW32)
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    return None


def _why(ip: ipaddress.IPv4Address | ipaddress.IPv6Address, allow_private: bool) -> str | None:
    if ip.is_link_local:  # refused even when private addresses are allowed: cloud metadata services live there
        return f"{ip} is a link-local address (where cloud metadata services answer), never reached"
    if allow_private:
        return None
    if ip.is_loopback:
        return f"{ip} is a loopback address"
    if ip.is_private or not ip.is_global or ip.is_multicast:
        return f"{ip} is a private or reserved address"
    return None


def refusal(address: str, allow_private: bool) -> str | None:
    """Why `address` (an IP address as text) may not be reached, or None when it may. `allow_private` lets loopback
    and private networks through (a local dev server, a LAN wiki), never link-local ones. An IPv6 address is judged
    as itself and as the IPv4 address it carries."""
    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return f"{address!r} is not an IP address"
    if isinstance(ip, ipaddress.IPv6Address):
        inner = embedded_ipv4(ip)
        if inner is not None:
            why = _why(inner, allow_private)
            if why is not None:
                return f"{ip} carries {why}"
    return _why(ip, allow_private)


def resolved(host: str, port: int) -> list[tuple[int, str]]:
    """The addresses `host` resolves to, each once, as (family, address); ToolError when it does not resolve."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise ToolError(f"cannot resolve {host!r}: {getattr(exc, 'strerror', None) or exc}") from None
    return list(dict.fromkeys((family, str(sockaddr[0])) for family, _, _, _, sockaddr in infos))


def open_checked(host: str, port: int, timeout: float, allow_private: bool | Callable[[str], bool],
                 resolve: Resolver = resolved, hint: str = "") -> socket.socket:
    """A socket connected to an address of `host` that may be reached; ToolError naming the address and why when
    none may (a name that resolves to a private address among public ones is refused whole). `allow_private` is a
    flag (web_fetch's: never link-local), or a test of one address that, when true, lets that address through
    whatever it is (the proxy's rule names it); `hint` is added to a refusal that it would lift."""
    addresses = resolve(host, port)

    def why_not(address: str) -> str | None:
        if callable(allow_private):
            return None if allow_private(address) else refusal(address, False)
        return refusal(address, allow_private)

    for _, address in addresses:
        why = why_not(address)
        if why is not None:
            tip = "" if not hint or "link-local" in why else f" ({hint})"
            where = "" if host.strip("[]") == address else f"{host} resolves to {address}: "
            raise ToolError(f"refused: {where}{why}{tip}")
    last: OSError | None = None
    for family, address in addresses:
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.settimeout(max(timeout, 0.001))
        try:
            sock.connect((address, port))
            peer = str(sock.getpeername()[0])
            why = why_not(peer)
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

"""What the user's settings allow web_fetch (`WebSetup`: which addresses, how many redirects, how much, how long),
and a URL's host (`host_of`). The address check and the one way web_fetch connects (resolve the name, check every
address, connect to a checked one, check the peer again) are the sandbox's `open_checked`, the check the command
sandbox's proxy makes too. Environment proxies are not used, so the address checked is the address reached.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlsplit

from cli_agent.contracts import dataclass
from cli_agent.sandbox import refusal

__all__ = ["WebSetup", "host_of"]

PRIVATE_HINT = "[web] allow_private = true in your user config allows it"


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


def plainly_refused(url: str, allow_private: bool) -> str | None:
    """Why web_fetch may not reach `url`, when its host says so without a lookup (an IP address, localhost): said
    before any approval question, which would be asked for nothing. A name is checked when it is fetched."""
    host = host_of(url)
    address = "127.0.0.1" if host == "localhost" or host.endswith(".localhost") else host
    try:
        ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return None
    why = refusal(address, allow_private)
    if why is None:
        return None
    where = "" if address == host else f"{host} is {address}: "
    tip = "" if "link-local" in why or allow_private else f" ({PRIVATE_HINT})"
    return f"refused: {where}{why}{tip}"

"""What the user's settings allow web_fetch (`WebSetup`: which addresses, how many redirects, how much, how long),
and a URL's host (`host_of`). The address check and the one way web_fetch connects (resolve the name, check every
address, connect to a checked one, check the peer again) are the sandbox's `open_checked`, the check the command
sandbox's proxy makes too. Environment proxies are not used, so the address checked is the address reached.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

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

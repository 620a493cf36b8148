"""Which hosts a command may reach through the proxy: the user's `[sandbox.network] allow` rules and `presets`.

A rule is a host (`pypi.org`), a host and port (`localhost:3141`, `127.0.0.1:8080`, `[::1]:8080`), or a wildcard
for the names below a domain (`*.pythonhosted.org`, which does not match `pythonhosted.org` itself). Without a port
a rule allows ports 80 and 443. A preset names the hosts of a package index and what it downloads from. Loopback,
private and link-local addresses are reached only when a rule names the address itself, or `localhost` with a port,
never because a name resolved there. `NetRules.allows` is the one check; `grant` adds a host for the session.
`[[permissions]]` rules with `domains` for commands come in as `ruled` (allow) and `denied` (deny, checked first by
`denies`: a host a rule denies is refused, whatever else allows it), each with the rule's name.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from dataclasses import replace

from cli_agent.contracts import dataclass

__all__ = ["PRESETS", "NetRules", "allow_setting"]

PRESETS: dict[str, tuple[str, ...]] = {
    "python": ("pypi.org", "files.pythonhosted.org"),
    "node": ("registry.npmjs.org", "registry.yarnpkg.com"),
    "rust": ("crates.io", "static.crates.io", "index.crates.io"),
    "go": ("proxy.golang.org", "sum.golang.org", "storage.googleapis.com"),
    "github": ("github.com", "api.github.com", "codeload.github.com", "objects.githubusercontent.com",
               "raw.githubusercontent.com"),
}
WEB_PORTS = (80, 443)


@dataclass(frozen=True)
class Rule:
    host: str  # lower-case, brackets gone; "*.example.org" for a wildcard
    port: int | None  # None: 80 and 443

    @property
    def text(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port is None else f"{host}:{self.port}"

    def matches(self, host: str, port: int) -> bool:
        if (port not in WEB_PORTS) if self.port is None else port != self.port:
            return False
        if self.host.startswith("*."):
            return host.endswith(self.host[1:]) and len(host) > len(self.host) - 1
        return host == self.host

    def names_address(self, host: str, port: int, address: str) -> bool:
        """This rule lets a loopback, private or link-local `address` through: it names the address itself, or it
        is `localhost:PORT` and the address is a loopback one."""
        if not self.matches(host, port):
            return False
        if self.host == "localhost":
            return self.port is not None and _ip(address) is not None and _ip(address).is_loopback  # type: ignore[union-attr]
        named, reached = _ip(self.host), _ip(address)
        return named is not None and named == reached


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None


def parse_rule(text: str) -> Rule:
    """A rule as the user writes it; ValueError saying what is wrong."""
    raw = text.strip().lower()
    host, port = raw, None
    if raw.startswith("["):
        inner, sep, rest = raw[1:].partition("]")
        if not sep or (rest and not rest.startswith(":")):
            raise ValueError(f"{text!r}: an IPv6 address is written [address] or [address]:port")
        host, port_text = inner, rest[1:]
        port = int(port_text) if port_text.isdigit() else None
        if rest and port is None:
            raise ValueError(f"{text!r}: the port is not a number")
    elif raw.count(":") == 1:
        host, _, port_text = raw.partition(":")
        if not port_text.isdigit():
            raise ValueError(f"{text!r}: the port is not a number")
        port = int(port_text)
    if port is not None and not 0 < port < 65536:
        raise ValueError(f"{text!r}: the port is out of range")
    name = host[2:] if host.startswith("*.") else host
    if not name or (_ip(name) is None and not all(part and part.replace("-", "").isalnum()
                                                  for part in name.split("."))):
        raise ValueError(f"{text!r} is not a host, host:port or *.domain")
    if host.startswith("*.") and _ip(name) is not None:
        raise ValueError(f"{text!r}: a wildcard stands for names, not addresses")
    return Rule(host, port)


def check_rules(allow: Iterable[str], presets: Iterable[str]) -> None:
    """ValueError for the first rule or preset that is not one (config checks its values with this)."""
    for text in allow:
        parse_rule(text)
    for name in presets:
        if name not in PRESETS:
            raise ValueError(f"unknown preset {name!r}: the presets are {', '.join(PRESETS)}")


def allow_rule(host: str, port: int) -> str:
    """The rule that allows `host:port`: the host alone for a name on the web's ports, else host:port."""
    shown = f"[{host}]" if ":" in host else host
    return shown if port in WEB_PORTS and _ip(host) is None and host != "localhost" else f"{shown}:{port}"


def allow_setting(host: str, port: int) -> str:
    """The setting that would allow `host:port`, as one line for the user."""
    return f'[sandbox.network] allow = ["{allow_rule(host, port)}"] in your user config allows it'


@dataclass(frozen=True)
class NetRules:
    """The hosts commands may reach: the user's rules, the presets' hosts, and those granted in this session."""

    allow: tuple[str, ...] = ()
    presets: tuple[str, ...] = ()
    ruled: tuple[tuple[str, str], ...] = ()  # (domain, the [[permissions]] rule that allows it)
    denied: tuple[tuple[str, str], ...] = ()  # (domain, the [[permissions]] rule that denies it)

    @property
    def rules(self) -> tuple[Rule, ...]:
        named = [*self.allow, *(d for d, _ in self.ruled), *(h for p in self.presets for h in PRESETS.get(p, ()))]
        return tuple(parse_rule(text) for text in dict.fromkeys(named))

    @staticmethod
    def valid(text: str) -> bool:
        """Whether `text` is a rule: a host, host:port or *.domain."""
        try:
            parse_rule(text)
        except ValueError:
            return False
        return True

    def denies(self, host: str, port: int) -> str | None:
        """The [[permissions]] rule that denies `host:port`, or None."""
        host = host.strip("[]").lower().rstrip(".")
        return next((why for text, why in self.denied if parse_rule(text).matches(host, port)), None)

    def allows(self, host: str, port: int) -> str | None:
        """The rule that allows `host:port` (as the user wrote it, or `preset python`), or None."""
        host = host.strip("[]").lower().rstrip(".")
        for text in self.allow:
            if parse_rule(text).matches(host, port):
                return text
        for preset in self.presets:
            if any(parse_rule(h).matches(host, port) for h in PRESETS.get(preset, ())):
                return f"preset {preset}"
        return next((why for text, why in self.ruled if parse_rule(text).matches(host, port)), None)

    def names_address(self, host: str, port: int, address: str) -> bool:
        """A rule names `address` (or is `localhost:PORT` for a loopback one): it may be reached though private."""
        host = host.strip("[]").lower().rstrip(".")
        return any(parse_rule(text).names_address(host, port, address)
                   for text in (*self.allow, *(d for d, _ in self.ruled)))

    def grant(self, host: str, port: int) -> NetRules:
        """These rules and `host:port` besides (an answer "for this session")."""
        shown = f"[{host}]" if ":" in host else host
        return replace(self, allow=(*self.allow, f"{shown}:{port}"))

    def lines(self) -> list[str]:
        """The rules as `cli-agent sandbox` shows them."""
        out = [f"allow {text}" for text in self.allow]
        out += [f"preset {p}: {', '.join(PRESETS.get(p, ()))}" for p in self.presets]
        out += [f"allow {text} ({why})" for text, why in self.ruled]
        out += [f"deny {text} ({why})" for text, why in self.denied]
        return out

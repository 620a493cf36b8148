"""Writing a host to the user config's `[sandbox.network] allow` ("always" at the network question): the file's bytes
are kept, but for the one rule added to the `allow` array (or the `[sandbox.network]` table appended, or an `allow`
line under it), and the new file replaces the old atomically. A file whose network setting is written another way
(`network = true`, a dotted key, an inline table) is left alone: the error says the line to add by hand.
"""

from __future__ import annotations

import errno
import json
import os
import re
from pathlib import Path
from typing import Any

from cli_agent.contracts import ConfigError
from cli_agent.fs import CONFIG_LIMIT, atomic, paths, read_regular
from cli_agent.validated import parse_toml

_HEADER = re.compile(r"^[ \t]*\[[ \t]*sandbox[ \t]*\.[ \t]*network[ \t]*\][ \t]*(#.*)?$", re.MULTILINE)
_NEXT_TABLE = re.compile(r"^[ \t]*\[", re.MULTILINE)
_ALLOW = re.compile(r"^[ \t]*allow[ \t]*=[ \t]*\[", re.MULTILINE)


def keep_host(rule: str, path: Path | None = None) -> Path:
    """Add `rule` (a host or host:port) to `[sandbox.network] allow` in the user config (or `path`); the file
    written. Nothing changes when the rule is there already. ConfigError (one line) when it cannot be written."""
    path = path or paths.user_config_file()
    text = _read(path)
    network = _network_of(parse_toml(text, str(path), ConfigError).data) if text else None
    by_hand = f'add "{rule}" to [sandbox.network] allow in {path} yourself'
    if network is None:
        joined = text + ("" if not text or text.endswith("\n") else "\n") + ("\n" if text else "")
        new = joined + f"[sandbox.network]\nallow = [{json.dumps(rule)}]\n"
    elif not isinstance(network, dict):
        raise ConfigError(f"{path}: sandbox.network is {json.dumps(network)}, not a table: {by_hand}")
    elif rule in (network.get("allow") or []):
        return path
    else:
        added = _added(text, rule)
        if added is None:
            raise ConfigError(f"{path}: [sandbox.network] is not written as a plain table: {by_hand}")
        new = added
    before = list(network.get("allow") or []) if isinstance(network, dict) else []
    after = _network_of(parse_toml(new, str(path), ConfigError).data)
    if not isinstance(after, dict) or after.get("allow") != [*before, rule]:
        raise ConfigError(f"{path}: could not add the rule safely: {by_hand}")
    _write(path, new, fresh=not text)
    return path


def _network_of(data: dict[str, Any]) -> Any:
    sandbox = data.get("sandbox")
    return sandbox.get("network") if isinstance(sandbox, dict) else None


def _added(text: str, rule: str) -> str | None:
    """`text` with `rule` in the `[sandbox.network]` table's `allow` array (or a new `allow` line), else None."""
    header = _HEADER.search(text)
    if header is None:
        return None
    body_end = header.end()
    following = _NEXT_TABLE.search(text, body_end + 1)
    end = following.start() if following else len(text)
    allow = _ALLOW.search(text, body_end, end)
    quoted = json.dumps(rule)
    if allow is None:
        return f"{text[:body_end]}\nallow = [{quoted}]{text[body_end:]}"
    close = _closing(text, allow.end())
    if close is None:
        return None
    before = text[allow.end():close].rstrip()
    cut = allow.end() + len(before)
    joint = "" if not before or before.endswith(",") else ", "
    return f"{text[:cut]}{joint}{quoted}{text[cut:]}"


def _closing(text: str, start: int) -> int | None:
    """The index of the `]` that closes the array opened just before `start` (strings and comments skipped); None
    when the array holds a comment (an edit could land in it) or never closes."""
    i = start
    while i < len(text):
        c = text[i]
        if c == "#":
            return None
        if c in "\"'":
            i = text.find(c, i + 1)
            if i < 0:
                return None
        elif c == "]":
            return i
        elif c == "[":
            return None
        i += 1
    return None


def _read(path: Path) -> str:
    try:
        old = read_regular(path, CONFIG_LIMIT)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise ConfigError(f"can't read {path}: {exc.strerror or exc}") from None
        return ""
    try:
        return old.decode("utf-8")
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; not adding the rule") from None


def _write(path: Path, text: str, fresh: bool) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    mode = 0o600 if fresh else os.stat(path).st_mode & 0o777
    fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic.write(fd, path.name, text.encode("utf-8"), mode, create=False)
    except OSError as exc:
        raise ConfigError(f"can't write {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)

"""The folders the user trusts: `trusted-folders.json` in the user state dir.

A folder is trusted by its real path together with the sha256 of its `.cli-agent/config.toml` as it was when the
user trusted it: a changed (or new, or removed) config is not trusted until the user says so again. Only the user
writes this file (`cli-agent trust`, the REPL's question); the model's tools never reach the state dir.
"""

from __future__ import annotations

import errno
import hashlib
import json
import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cli_agent.config.settings import mask_secret
from cli_agent.contracts import ConfigError, dataclass, escape_for_terminal
from cli_agent.fs import CONFIG_LIMIT, atomic, paths, read_regular
from cli_agent.validated import Secret

__all__ = ["TrustEntry", "earlier_entry", "folder_trusted", "trust_folder", "withheld_lines"]

FILE = "trusted-folders.json"
NO_CONFIG = "none"  # the digest of a folder without a project config
TRUE = ("1", "true", "yes", "on")  # CLI_AGENT_TRUST values that trust


@dataclass(frozen=True)
class TrustEntry:
    folder: str  # the real path
    digest: str  # sha256 of the project config when trusted, or NO_CONFIG
    trusted_at: float
    settings: tuple[str, ...] = ()  # what trusting it set, as `key = value` lines (secrets masked), when known

    @property
    def current(self) -> bool:
        """The folder's config is still the one the user trusted."""
        return config_digest(Path(self.folder)) == self.digest


def config_digest(folder: Path) -> str:
    try:
        return hashlib.sha256(read_regular(paths.project_config_file(folder), CONFIG_LIMIT)).hexdigest()
    except OSError as exc:
        if exc.errno == errno.ENOENT:
            return NO_CONFIG
        return f"unreadable ({exc.strerror or exc})"


def _real(folder: Path) -> Path:
    return Path(os.path.realpath(folder))


def folder_trusted(folder: Path) -> bool:
    """Trusted for this process: `CLI_AGENT_TRUST` set, or the folder and its current config in the store."""
    return os.environ.get("CLI_AGENT_TRUST", "").strip().lower() in TRUE or is_trusted(folder)


def is_trusted(folder: Path) -> bool:
    real = _real(folder)
    digest = config_digest(real)
    return any(e.folder == str(real) and e.digest == digest for e in entries())


def trust_folder(folder: Path, settings: tuple[str, ...] = ()) -> TrustEntry:
    """Trust the folder with its config as it is now (replacing an earlier entry for it); `settings`: what that
    config sets that needs trust, kept to say what changed when it changes."""
    real = _real(folder)
    if not real.is_dir():
        raise ConfigError(f"not a folder: {folder}")
    entry = TrustEntry(str(real), config_digest(real), time.time(), tuple(settings))
    _save([e for e in entries() if e.folder != entry.folder] + [entry])
    return entry


def earlier_entry(folder: Path) -> TrustEntry | None:
    """The folder's entry when the user trusted it with a config that has changed since."""
    real = _real(folder)
    digest = config_digest(real)
    return next((e for e in entries() if e.folder == str(real) and e.digest != digest), None)


def revoke(folder: Path) -> bool:
    """Forget the folder; False when it was not trusted."""
    real = str(_real(folder))
    kept = [e for e in entries() if e.folder != real]
    if len(kept) == len(entries()):
        return False
    _save(kept)
    return True


def listing() -> list[str]:
    """`cli-agent trust --list`: each trusted folder with its config's digest; one whose config changed since it was
    trusted is marked (it is not trusted until trusted again)."""
    return [f"{e.folder}  config {e.digest[:12]}"
            + ("" if e.current else "  (its config changed since: not trusted until trusted again)")
            for e in entries()]


def revoked_line(folder: Path, done: bool) -> str:
    """What `cli-agent trust --revoke` says; `done`: `revoke` forgot the folder."""
    return f"{'no longer trusted' if done else 'was not trusted'}: {folder.resolve()}"


def trusted_line(entry: TrustEntry, withheld: Iterable[str]) -> str:
    """What `cli-agent trust` says: the folder, its config's digest, and the keys it may now set."""
    keys = list(withheld)
    unlocked = f"; its config may now set {', '.join(keys)}" if keys else ""
    return f"trusted {entry.folder} (config sha256 {entry.digest[:12]}){unlocked}"


def entries() -> list[TrustEntry]:
    path = paths.user_state_dir() / FILE
    try:
        data = json.loads(read_regular(path, CONFIG_LIMIT).decode("utf-8"))
        return [TrustEntry(str(e["folder"]), str(e["digest"]), float(e["trusted_at"]),
                           tuple(str(line) for line in e.get("settings", ()))) for e in data["folders"]]
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            raise ConfigError(f"the trust store {path} can't be read ({exc.strerror}); remove it and trust the "
                              f"folders again") from None
        return []
    except (ValueError, KeyError, TypeError) as exc:  # a damaged store trusts nothing, and says so
        raise ConfigError(f"the trust store {path} is damaged ({type(exc).__name__}); remove it and trust the "
                          f"folders again") from None


def _save(items: list[TrustEntry]) -> None:
    folder = paths.user_state_dir()
    folder.mkdir(parents=True, exist_ok=True)
    data = {"format": 1, "folders": [{"folder": e.folder, "digest": e.digest, "trusted_at": e.trusted_at,
                                      **({"settings": list(e.settings)} if e.settings else {})}
                                     for e in sorted(items, key=lambda e: e.folder)]}
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic.write(fd, FILE, (json.dumps(data, indent=2) + "\n").encode(), 0o600, create=False)
    finally:
        os.close(fd)


def withheld_lines(withheld: dict[str, Any]) -> list[str]:
    """`key = value` lines for the keys a trusted config would set (an API key masked)."""
    lines = []
    for key, value in withheld.items():
        shown = mask_secret(value.get_secret_value()) if isinstance(value, Secret) else repr(value)
        lines.append(escape_for_terminal(f"  {key} = {shown}"))
    return lines

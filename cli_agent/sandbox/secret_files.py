"""Secret files under /etc, found by rule in the trees a command can read, to be masked.

On top of the fixed list (`fs.credentials.ETC_SECRETS`: shadow, sudoers, ssh, ssl/private, ...), which stays as a
floor: **what others may not read stays unread.** A file or folder under /etc without the "others may read" bit
(private keys of WireGuard, Let's Encrypt, keytabs, database passwords) is hidden, since a command may run as root,
who could read it anyway. Names of key material (`*.key`, `*.keytab`, `*privkey*`, `*secret*`, `*password*`) are
hidden even when world-readable. HOME is not scanned: only its allowlisted tool folders are shown (`home_tools`).

A scan is kept for `_TTL_S` seconds while the tree's own folder is unchanged (a session runs many commands), and
stops at `_MAX_ENTRIES` entries.
"""

from __future__ import annotations

import os
import stat
import time
from pathlib import Path

from cli_agent.fs import etc_private, etc_secret_name

_MAX_ENTRIES = 200_000
_MAX_DEPTH = 64
_TTL_S = 60.0

_cache: dict[str, tuple[float, int, tuple[Path, ...]]] = {}


def secret_files(tree: Path) -> tuple[Path, ...]:
    """The paths to hide in `tree` (real, absolute, under /etc)."""
    try:
        changed = os.stat(tree).st_mtime_ns
    except OSError:
        return ()
    now = time.monotonic()
    hit = _cache.get(str(tree))
    if hit is not None and hit[1] == changed and now - hit[0] < _TTL_S:
        return hit[2]
    found = tuple(_scan(tree))
    _cache[str(tree)] = (now, changed, found)
    return found


def _scan(tree: Path) -> list[Path]:
    found: list[Path] = []
    stack = [(str(tree), 0)]
    seen = 0
    while stack and seen < _MAX_ENTRIES:
        folder, depth = stack.pop()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            continue
        for entry in entries:
            seen += 1
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue  # a link shows its target, which is judged where it lies (if it is shown at all)
            if etc_private(st) or (not stat.S_ISDIR(st.st_mode) and etc_secret_name(entry.name)):
                found.append(Path(entry.path))
            elif stat.S_ISDIR(st.st_mode) and depth + 1 < _MAX_DEPTH:
                stack.append((entry.path, depth + 1))
    return found

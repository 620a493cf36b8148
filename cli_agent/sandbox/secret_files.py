"""Secret files, found by rule in the host trees a command can read, to be masked.

Two rules, on top of the fixed lists in `layout` (~/.ssh, ~/.aws, /etc/shadow, ...), which stay as a floor:

- **/etc: what others may not read stays unread.** A file or folder under /etc without the "others may read"
  bit (private keys of WireGuard, Let's Encrypt, `ssl/private`, keytabs, shadow, sudoers, database passwords) is
  hidden, since a command may run as root, who could read it anyway. Names of key material (`*.key`, `*.keytab`,
  `*privkey*`, `*secret*`, `*password*`) are hidden even when world-readable.
- **Trees shown from HOME (the tool caches): credential names are hidden.** A token, credential, auth, password or
  key file (`~/.cache/huggingface/token`, `stored_tokens`, `auth.json`, `*.key`, `*key*.pem`, `id_ed25519`, ...)
  is hidden at any depth up to `HOME_DEPTH` below the tree; code (`token.py`, `secrets.pyc`) and folders are not,
  and installed interpreters (`layout.HOME_TOOLCHAINS`: ~/.pyenv, ~/.rustup, ~/.nvm, ...) are not scanned.

A scan is kept for `_TTL_S` seconds while the tree's own folder is unchanged (a session runs many commands), and
stops at `_MAX_ENTRIES` entries.
"""

from __future__ import annotations

import os
import re
import stat
import time
from pathlib import Path

__all__ = ["HOME_DEPTH", "credential_name", "etc_secret_name", "secret_files"]

HOME_DEPTH = 6
_MAX_ENTRIES = 200_000
_TTL_S = 60.0

_CREDENTIAL = re.compile(
    r"(^|[._-])(tokens?|credentials?|secrets?|passw(or)?d|passwords?|auth|apikey|api[_-]key|netrc|keytab|"
    r"private[_-]key|privkey|htpasswd)([._-]|$)"
    r"|\.(key|p12|pfx|jks|keystore|kdbx|keytab|ppk)$|(key|priv).*\.pem$"
    r"|^id_(rsa|dsa|ecdsa|ed25519)(_sk)?$|^(stored_tokens|hosts\.yml|cookies(\.sqlite)?|\.?netrc|\.git-credentials)$",
    re.IGNORECASE)
# Code and its caches are never credentials, whatever they are called (the standard library's token.py, secrets.py)
_CODE = re.compile(r"\.(py|pyc|pyi|pyo|pyd|so|dylib|dll|js|mjs|cjs|ts|tsx|jsx|rb|go|rs|java|class|jar|c|h|cc|cpp|hpp|"
                   r"md|rst|html|css|map|typed)$", re.IGNORECASE)
_ETC_KEY = re.compile(r"\.(key|keytab|p12|pfx|jks)$|privkey|secret|password|passwd-s3fs", re.IGNORECASE)

_cache: dict[tuple[str, str, int], tuple[float, tuple[Path, ...]]] = {}


def credential_name(name: str) -> bool:
    return bool(_CREDENTIAL.search(name)) and not _CODE.search(name)


def etc_secret_name(name: str) -> bool:
    return bool(_ETC_KEY.search(name))


def secret_files(tree: Path, kind: str) -> tuple[Path, ...]:
    """The paths to hide in `tree` (real, absolute); `kind` is "etc" or "home"."""
    try:
        key = (str(tree), kind, os.stat(tree).st_mtime_ns)
    except OSError:
        return ()
    now = time.monotonic()
    hit = _cache.get(key)
    if hit is not None and now - hit[0] < _TTL_S:
        return hit[1]
    found = tuple(_scan(tree, kind))
    _cache[key] = (now, found)
    return found


def _scan(tree: Path, kind: str) -> list[Path]:
    found: list[Path] = []
    depth_max = 64 if kind == "etc" else HOME_DEPTH
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
            if _hide(entry.name, st, kind):
                found.append(Path(entry.path))
            elif stat.S_ISDIR(st.st_mode) and depth + 1 < depth_max:
                stack.append((entry.path, depth + 1))
    return found


def _hide(name: str, st: os.stat_result, kind: str) -> bool:
    if kind == "etc":
        if stat.S_ISDIR(st.st_mode):
            return not (st.st_mode & stat.S_IROTH and st.st_mode & stat.S_IXOTH)
        return not st.st_mode & stat.S_IROTH or etc_secret_name(name)
    return stat.S_ISREG(st.st_mode) and credential_name(name)  # a folder of a package may be called auth/

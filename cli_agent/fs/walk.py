"""Listing a folder tree beneath the workspace root through file descriptors, the way `git` would show it.

Breadth first (so a `limit` keeps the shallow entries), names sorted, `.git` skipped, `.gitignore` files honoured
(those of the folders above the start too), linked folders listed but never entered.
"""

from __future__ import annotations

import os
import stat
from collections import deque
from collections.abc import Callable

from cli_agent.fs.pathmatch import IgnoreRules, compile_glob, fold
from cli_agent.fs.resolve_beneath import open_dir

MAX_VISITS = 200_000  # entries looked at in one walk, listed or not
_IGNORE_MAX = 1 << 20


class Listing(list[str]):
    """The paths a walk found, sorted. `unfinished` says why it stopped before it had looked at every entry (None:
    it looked at them all, or it stopped at the caller's `limit`, which the caller counts itself)."""

    unfinished: str | None = None


def _listing(paths: list[str], unfinished: str | None = None) -> Listing:
    out = Listing(sorted(paths))
    out.unfinished = unfinished
    return out


def walk_tree(root_fd: int, start_fd: int, base: tuple[str, ...], *, depth: int | None, pattern: str | None,
              limit: int, hide: Callable[[tuple[str, ...]], bool] | None = None) -> Listing:
    """Paths (workspace-relative; folders end with "/" unless `pattern` is given) below `start_fd` = `base`;
    `hide(names)` leaves a path (and what a folder holds) out, unlisted and unvisited."""
    rules = _rules_above(root_fd, base)
    match = compile_glob(pattern) if pattern else None
    queue: deque[tuple[tuple[str, ...], IgnoreRules]] = deque([((), rules)])
    out: list[str] = []
    visited = 0
    while queue:
        sub, rules = queue.popleft()
        try:
            fd = _open_below(start_fd, sub)
        except OSError:
            continue
        try:
            text = _gitignore(fd)
            if text is not None:
                rules = rules.extended("/".join(base + sub), text)
            with os.scandir(fd) as it:
                entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in it)
        except OSError:
            continue
        finally:
            os.close(fd)
        for name, is_dir in entries:
            visited += 1
            if visited > MAX_VISITS:
                return _listing(out, f"the listing stopped after looking at {MAX_VISITS:,} entries")
            if fold(name) == ".git":
                continue
            path = "/".join((*base, *sub, name))
            if rules.ignored(path, is_dir) or (hide is not None and hide((*base, *sub, name))):
                continue
            if match is None:
                out.append(path + "/" if is_dir else path)
            elif not is_dir and match.fullmatch("/".join((*sub, name))):
                out.append(path)
            if len(out) >= limit:
                return _listing(out)
            if is_dir and (depth is None or len(sub) + 1 < depth):
                queue.append(((*sub, name), rules))
    return _listing(out)


def _open_below(fd: int, names: tuple[str, ...]) -> int:
    current = os.dup(fd)
    for name in names:
        try:
            child = open_dir(name, current)
        finally:
            os.close(current)
        current = child
    return current


def _rules_above(root_fd: int, base: tuple[str, ...]) -> IgnoreRules:
    """The `.gitignore` rules of the folders from the root down to `base`'s parent."""
    rules = IgnoreRules()
    for k in range(len(base)):
        try:
            fd = _open_below(root_fd, base[:k])
        except OSError:
            break
        try:
            text = _gitignore(fd)
        finally:
            os.close(fd)
        if text is not None:
            rules = rules.extended("/".join(base[:k]), text)
    return rules


def _gitignore(dir_fd: int) -> str | None:
    try:
        fd = os.open(".gitignore", os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC, dir_fd=dir_fd)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.read(fd, _IGNORE_MAX).decode("utf-8", errors="surrogateescape")
    finally:
        os.close(fd)

"""Paths a repository names (locks in `.cli-agent/config.toml` or `facts.toml`), confined to the workspace before
the sandbox binds them.

A repository may only narrow what a command can write inside the workspace; it can never make the sandbox show
or bind anything else. So a name is bound read-only only when it is a plain relative path (a leading `/` anchors
it at the workspace, as in .gitignore) that, followed on disk, stays inside the workspace with no symbolic link on
the way and names an existing regular file or folder. Every other name (`..`, a link on the way, nothing there, a
socket or device, a control character) is refused with a one-line note and never reaches bwrap; the lock's glob
still refuses writes to it in the change set.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable
from pathlib import Path

from cli_agent.contracts import dataclass

__all__ = ["confine_locks"]

_GLOB = frozenset("*?[!")


@dataclass(frozen=True)
class Confined:
    paths: tuple[str, ...]  # workspace-relative, normalised, existing, no link on the way: safe to bind read-only
    notes: tuple[str, ...]  # one line per name refused


def confine_locks(workspace: Path, names: Iterable[str]) -> Confined:
    """The literal names among `names` that may be bound read-only over the workspace; globs are skipped quietly
    (they are enforced on the change set only)."""
    root = os.path.realpath(workspace)
    kept: list[str] = []
    notes: list[str] = []
    for name in names:
        if not name.strip("/") or any(c in _GLOB for c in name):
            continue
        why = _why_not(root, name)
        if why is None:
            rel = posixpath.normpath(name.strip("/"))
            if rel not in kept:
                kept.append(rel)
        else:
            notes.append(f"lock {name!r} is not bound read-only in the command sandbox: {why}")
    return Confined(tuple(kept), tuple(notes))


def _why_not(root: str, name: str) -> str | None:
    if "\0" in name or any(ord(c) < 32 for c in name):
        return "it holds a control character"
    if ".." in name.split("/"):
        return "it leads outside the workspace (..)"
    rel = posixpath.normpath(name.strip("/"))
    if rel == ".":
        return "it names the workspace itself"
    here = root
    for part in rel.split("/"):
        here = os.path.join(here, part)
        if os.path.islink(here):
            return "a symbolic link on the way"
        if not os.path.lexists(here):
            return "nothing exists there"
    real = os.path.realpath(here)
    if real != here or not real.startswith(root.rstrip("/") + "/"):
        return "it resolves outside the workspace"
    if not (os.path.isdir(real) or os.path.isfile(real)):
        return "not a regular file or folder (a socket, FIFO or device is never bound)"
    return None

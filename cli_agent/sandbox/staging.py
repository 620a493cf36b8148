"""The staging layer read back as a change set: what a command created, changed, deleted, renamed or re-moded.

The upper folder of the workspace overlay holds every file the command wrote (whole, copied up), a 0/0 character
device for every name it removed (a whiteout) and, on a folder it removed and made again, the xattr
`user.overlay.opaque = y`. `collect` compares that with the workspace as it is and returns a `ChangeSet` of planned
`Change`s, nothing written. A file whose bytes and mode are unchanged (only touched) is no change; a delete and a
create with the same bytes are shown as a rename. Files `.gitignore` ignores, and caches (`__pycache__`,
`.pytest_cache`, ...), are left out and counted. Symbolic links, special files, protected or locked paths and
files over the size budget are refused, each with its reason.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from cli_agent.contracts import Change, ToolError, dataclass
from cli_agent.fs import IgnoreRules, locate_in, open_regular

__all__ = ["ChangeSet"]

Check = Callable[[str, bool], "str | None"]
_PATH_MAX = 4096

CACHE_IGNORES = ("__pycache__/", "*.py[cod]", ".pytest_cache/", ".mypy_cache/", ".ruff_cache/", ".hypothesis/",
                 ".coverage", ".cache/")
TOOL = "run_command"


@dataclass(frozen=True)
class ChangeSet:
    changes: tuple[Change, ...] = ()
    renames: tuple[tuple[str, str], ...] = ()  # (from, to), each also a delete and a create in `changes`
    ignored: int = 0  # files left out because .gitignore (or the cache list) ignores them
    refused: tuple[tuple[str, str], ...] = ()  # (path, why it can't be applied)
    removed_dirs: tuple[str, ...] = ()  # folders the command removed: removed after applying, when left empty

    def __bool__(self) -> bool:
        return bool(self.changes)

    def counts(self) -> dict[str, int]:
        renamed = {p for pair in self.renames for p in pair}
        out = {"created": 0, "edited": 0, "deleted": 0, "renamed": len(self.renames), "mode_changed": 0}
        for change in self.changes:
            if change.path in renamed:
                continue
            if change.kind == "edit" and change.before == change.after:
                out["mode_changed"] += 1
            else:
                out[{"create": "created", "delete": "deleted"}.get(change.kind, "edited")] += 1
        return out

    def summary(self) -> str:
        parts = [f"{n} {what.replace('_', ' ')}" for what, n in self.counts().items() if n]
        text = ", ".join(parts) if parts else "no file changes"
        if self.ignored:
            text += f"; {self.ignored} ignored file(s) left out"
        if self.refused:
            text += f"; {len(self.refused)} refused"
        return text

    def to_dict(self) -> dict[str, Any]:
        return {"summary": self.summary(), **self.counts(),
                "files": [{"path": c.path, "kind": c.kind, "summary": c.summary} for c in self.changes],
                "renames": [list(pair) for pair in self.renames], "ignored": self.ignored,
                "refused": [{"path": p, "reason": r} for p, r in self.refused]}


@dataclass
class _Found:
    changes: list[Change] = field(default_factory=list)
    refused: list[tuple[str, str]] = field(default_factory=list)
    removed_dirs: list[str] = field(default_factory=list)
    ignored: int = 0
    budget: int = 0


class _Collector:
    def __init__(self, root: Path, upper: Path, check: Check, max_bytes: int) -> None:
        self.root, self.upper, self.check = root, upper, check
        self.found = _Found(budget=max_bytes)
        self.replaced: set[str] = set()  # paths whose kind the set changes (a folder made a file, or back)

    # -- the lower layer (the workspace) ----------------------------------------------------------------------

    def lower_stat(self, rel: str) -> os.stat_result | None:
        try:
            with locate_in(str(self.root), tuple(rel.split("/")), follow=False) as loc:
                return loc.stat if len(loc.tail) <= 1 else None
        except ToolError:
            return None  # a link on the way: nothing of the workspace is there

    def lower_bytes(self, rel: str) -> bytes:
        with locate_in(str(self.root), tuple(rel.split("/")), follow=False) as loc:
            fd = open_regular(loc)
        with os.fdopen(fd, "rb") as fh:
            return fh.read()

    def gitignore(self, rel_dir: str, rules: IgnoreRules) -> IgnoreRules:
        name = f"{rel_dir}/.gitignore" if rel_dir else ".gitignore"
        st = self.lower_stat(name)
        if st is None or not stat.S_ISREG(st.st_mode) or st.st_size > 1 << 20:
            return rules
        return rules.extended(rel_dir, self.lower_bytes(name).decode("utf-8", errors="replace"))

    # -- walking the upper layer ------------------------------------------------------------------------------

    def walk(self, rel_dir: str, rules: IgnoreRules, lower_dir: bool, ignored: bool) -> None:
        folder = self.upper / rel_dir if rel_dir else self.upper
        try:
            if lower_dir:
                rules = self.gitignore(rel_dir, rules)
            with os.scandir(folder) as entries:
                listing = sorted(entries, key=lambda e: e.name)
        except (OSError, ToolError) as exc:
            self.found.refused.append((rel_dir or ".", f"its folder could not be read back: {_why(exc)}"))
            return
        seen: set[str] = set()
        for entry in listing:
            rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
            seen.add(entry.name)
            try:
                self.entry(rel, entry, rules, lower_dir, ignored)
            except (OSError, ToolError) as exc:  # one path that can't be read back is refused alone
                self.found.refused.append((rel, f"it could not be read back: {_why(exc)}"))
        if lower_dir and _opaque(folder):  # removed and made again: what it held before is gone
            self.gone_below(rel_dir, seen, rules, ignored)

    def entry(self, rel: str, entry: os.DirEntry[str], rules: IgnoreRules, lower_dir: bool, ignored: bool) -> None:
        if not _plain(entry.name):
            self.found.refused.append((_shown(rel), "its name is not valid UTF-8 or holds a control character: "
                                                    "not applied"))
            return
        st = entry.stat(follow_symlinks=False)
        if len(os.fsencode(rel)) > _PATH_MAX - len(os.fsencode(str(self.root))) - 1:
            self.found.refused.append((rel, "its path is too long for this workspace: not applied"))
            return
        lower = self.lower_stat(rel) if lower_dir else None
        if stat.S_ISCHR(st.st_mode) and st.st_rdev == 0:  # a whiteout: the command removed it
            if lower is not None:
                self.deleted(rel, lower, rules, ignored)
            return
        if lower is not None and stat.S_ISDIR(lower.st_mode) != stat.S_ISDIR(st.st_mode):
            self.deleted(rel, lower, rules, ignored)  # a file became a folder, or the other way round
            self.replaced.add(rel)  # what is made in its place is judged against the workspace as the set leaves it
            lower = None
        if stat.S_ISDIR(st.st_mode):
            self.walk(rel, rules, lower is not None, ignored or rules.ignored(rel, True))
        elif ignored or rules.ignored(rel, False):
            self.found.ignored += 1
        elif stat.S_ISREG(st.st_mode):
            self.file(rel, Path(entry.path), st, lower)
        else:
            kind = "a symbolic link" if stat.S_ISLNK(st.st_mode) else "a special file"
            self.found.refused.append((rel, f"{kind}: only regular files are applied"))

    def gone_below(self, rel_dir: str, keep: set[str], rules: IgnoreRules, ignored: bool) -> None:
        try:
            with os.scandir(self.root / rel_dir) as entries:
                names = sorted(e.name for e in entries if e.name not in keep)
        except OSError:
            return
        for name in names:
            rel = f"{rel_dir}/{name}" if rel_dir else name
            if not _plain(name):
                self.found.refused.append((_shown(rel), "removing it is not applied: its name is not valid UTF-8 "
                                                        "or holds a control character"))
                continue
            lower = self.lower_stat(rel)
            if lower is not None:
                self.deleted(rel, lower, rules, ignored)

    def deleted(self, rel: str, lower: os.stat_result, rules: IgnoreRules, ignored: bool) -> None:
        if stat.S_ISDIR(lower.st_mode):
            self.found.removed_dirs.append(rel)
            inner = self.gitignore(rel, rules)
            self.gone_below(rel, set(), inner, ignored or rules.ignored(rel, True))
        elif ignored or rules.ignored(rel, False):
            self.found.ignored += 1
        elif not stat.S_ISREG(lower.st_mode):
            self.found.refused.append((rel, "removing a symbolic link or special file is not applied"))
        else:
            self.add(rel, lambda: Change(TOOL, "delete", rel, self.lower_bytes(rel), None, summary="deleted"),
                     lower.st_size)

    def file(self, rel: str, path: Path, st: os.stat_result, lower: os.stat_result | None) -> None:
        mode = stat.S_IMODE(st.st_mode) & 0o777
        if lower is None:
            self.add(rel, lambda: Change(TOOL, "create", rel, None, _read(path), mode=mode, summary="created"),
                     st.st_size)
            return
        if not stat.S_ISREG(lower.st_mode):
            self.found.refused.append((rel, "it replaces a symbolic link or special file"))
            return
        old_mode = stat.S_IMODE(lower.st_mode) & 0o777
        before, after = self.lower_bytes(rel), _read(path)
        if before == after and mode == old_mode:
            return  # only touched
        what = "edited" if before != after else f"mode {old_mode:o} → {mode:o}"
        if before != after and mode != old_mode:
            what += f", mode {old_mode:o} → {mode:o}"
        self.add(rel, lambda: Change(TOOL, "edit", rel, before, after, mode=mode if mode != old_mode else None,
                                     summary=what), st.st_size + lower.st_size)

    def add(self, rel: str, make: Callable[[], Change], size: int) -> None:
        planned = any(rel == r or rel.startswith(r + "/") for r in self.replaced)
        reason = self.check(rel, planned)
        if reason is not None:
            self.found.refused.append((rel, reason))
            return
        if size > self.found.budget:
            self.found.refused.append((rel, f"too large to stage ({size:,} bytes; the change set's budget is "
                                            f"spent)"))
            return
        self.found.budget -= size
        self.found.changes.append(make())


def _plain(name: str) -> bool:
    """A name every layer can carry: valid UTF-8 (no surrogate escapes) and no control character."""
    return name.isprintable()  # surrogate escapes (undecodable bytes) and control characters are not printable


def _shown(rel: str) -> str:
    """`rel` as printable UTF-8 text: undecodable bytes and control characters as escapes."""
    raw = os.fsencode(rel).decode("utf-8", errors="backslashreplace")
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in raw)


def _why(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        return exc.strerror or str(exc)
    return getattr(exc, "message", str(exc))


def _read(path: Path) -> bytes:
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    with os.fdopen(fd, "rb") as fh:
        return fh.read()


def _opaque(folder: Path) -> bool:
    for name in ("user.overlay.opaque", "trusted.overlay.opaque"):
        try:
            if os.getxattr(folder, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def collect(root: Path, upper: Path, check: Check, *, max_bytes: int = 256 << 20,
            extra_ignores: tuple[str, ...] = CACHE_IGNORES) -> ChangeSet:
    """The change set the staging folder `upper` holds against the workspace `root`.

    `check(path, planned)` says why a path may not be written (protected, locked, in the way), or None; `planned`:
    the set itself removes what is in the way (a folder it makes a file, or a file it makes a folder), so only
    what does not depend on the workspace's present shape is judged.
    """
    collector = _Collector(root, upper, check, max_bytes)
    collector.walk("", IgnoreRules().extended("", "\n".join(extra_ignores)), True, False)
    found = collector.found
    changes, renames = _pair_renames(found.changes)
    return ChangeSet(tuple(changes), tuple(renames), found.ignored, tuple(found.refused),
                     tuple(sorted(found.removed_dirs, key=lambda d: -d.count("/"))))


def _pair_renames(changes: list[Change]) -> tuple[list[Change], list[tuple[str, str]]]:
    deletes = {c.before: c for c in changes if c.kind == "delete" and c.before}
    renames: list[tuple[str, str]] = []
    out: list[Change] = []
    for change in changes:
        source = deletes.pop(change.after, None) if change.kind == "create" and change.after else None
        if source is None:
            out.append(change)
            continue
        renames.append((source.path, change.path))
        out.append(replace(change, summary=f"renamed from {source.path}"))
    gone = {old for old, _ in renames}
    return [replace(c, summary=f"renamed to {dict(renames)[c.path]}") if c.path in gone and c.kind == "delete"
            else c for c in out], renames

"""Undoing a turn of the undo journal, and the reversal engine it shares with replay's rewind.

`undo_turn(journal, turn)` reverts one turn, newest change first, byte for byte and mode included, through a `Workspace`
(containment, no links, no hard-linked targets, `apply`'s "unchanged since read" check). It is the user's action, so
user locks do not stop it; protected paths still do (the agent can never have changed them). Before anything is
written, every file is checked to be as the agent left it (the recorded after-sha256) and writable (a regular file,
no hard links, no link on the way): if one is not, nothing is reverted and the error names it. An undo while a turn
runs in the workspace (in any process) is refused. Git's index and refs, and every file the turn did not change, are
never touched. The folders the turn's changes created are removed again when they are left empty, and an "undone"
line is appended to the journal, all under the journal's lock.

The engine (`current_bytes`, `reverting_change`, `remove_empty_dirs`) reverses one file's change through a
`Workspace`; `rewind.py` uses it too, with the earlier bytes a trace holds instead of the journal's. The journal's
turns as text or JSON (`render_turns`, `turns_json`) are for both front ends: `cli-agent undo` (`cli/`) and the
REPL's `/undo` (`ui/repl/commands/undo_commands.py`).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import Change, ToolError, clip, dataclass, errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.fs import DEFAULT_PROTECTED, Workspace, locate_in, open_regular
from cli_agent.history.journal import Journal, Turn
from cli_agent.tools import FILE_MAX

if TYPE_CHECKING:
    from cli_agent.contracts import Change, ChangeKind
    from cli_agent.fs import Workspace

__all__ = ["current_bytes", "remove_empty_dirs", "render_turns", "reverting_change", "turns_json", "undo_turn"]


@dataclass(frozen=True)
class Undone:
    turn: int
    done: tuple[str, ...]  # one line per file: "restored a.py", "removed new.txt", "recreated old.txt"


# -- undoing -------------------------------------------------------------------------------------------------------

def undo_turn(journal: Journal, turn: int | None = None, *, listing: str = "cli-agent undo --list") -> Undone:
    """Revert `turn` (default: the newest turn not undone yet) of `journal`; see the module docstring. `listing`:
    how the front end lists the turns, named in the errors (the REPL's `/undo list`)."""
    workspace = Workspace(journal.root, protected=DEFAULT_PROTECTED)
    if not journal.file.exists():
        raise errors.UsageError(f"nothing to undo in {journal.root}: cli-agent has not changed a file here")
    with journal.no_turn_running(), journal.exclusive():
        target = _pick(journal, turn, listing)
        plan, emptied = _plan(journal, workspace, target)
        done: list[str] = []
        for change in plan:
            try:
                if change.path in emptied:  # a folder the turn made where a file was: emptied by now, removed
                    remove_empty_dirs(journal.root, emptied[change.path])
                workspace.apply(change)
            except ToolError as exc:  # someone changed the file since it was checked, just now
                shown = "; ".join(done) or "nothing"
                raise errors.CliAgentError(f"undo of turn {target.number} stopped at {change.path}: "
                                           f"{exc.message} (done so far: {shown}); run undo again to "
                                           f"finish") from None
            done.append({"delete": "removed", "create": "recreated"}.get(change.kind, "restored")
                        + f" {shown_path(change.path)}")
        remove_empty_dirs(journal.root, (d for e in target.changes for d in e.dirs))
        journal.mark_undone(target.number, sorted({c.path for c in plan}))
    return Undone(target.number, tuple(done))


def _pick(journal: Journal, turn: int | None, listing: str) -> Turn:
    turns = journal.turns()
    if turn is None:
        left = [t for t in turns if not t.undone]
        if not left:
            raise errors.UsageError(f"nothing to undo in {journal.root}: every turn in the journal is undone "
                                    f"already (see {listing})")
        return left[-1]
    found = next((t for t in turns if t.number == turn), None)
    if found is None:
        raise errors.UsageError(f"turn {turn} is not in the undo journal of {journal.root} (see {listing})")
    if found.undone:
        raise errors.UsageError(f"turn {turn} was undone already")
    return found


def _plan(journal: Journal, workspace: Workspace, target: Turn) -> tuple[list[Change], dict[str, list[str]]]:
    """The changes that revert `target`, checked against the files as they are now (and as the changes planned
    before each leave them), and the folders to remove before a file comes back in their place (a turn that turned
    a file into a folder); nothing is written."""
    now: dict[str, bytes | None] = {}
    plan: list[Change] = []
    emptied: dict[str, list[str]] = {}
    for entry in reversed(target.changes):
        if entry.path not in now:
            try:
                now[entry.path] = _current(workspace, entry.path, now, emptied)
            except ToolError as exc:
                raise errors.CliAgentError(f"undo refused: {entry.path} can't be read ({exc.message}); "
                                           f"nothing was changed") from None
        current = now[entry.path]
        sha = hashlib.sha256(current).hexdigest() if current is not None else None
        if sha == entry.before and entry.before != entry.after:
            continue  # never written, or reverted by an earlier, interrupted undo
        if sha == entry.before and _mode(workspace, entry.path) == entry.mode:
            continue  # a mode change already reverted
        if sha != entry.after:
            raise errors.CliAgentError(
                f"undo refused: {entry.path} changed since the agent wrote it (turn {target.number}, "
                f"{entry.tool}); nothing was changed. Revert it by hand, or undo another turn")
        try:  # every file writable (no hard link, no link on the way, a regular file) before any is written
            if not _replaced(entry.path, now, emptied) and workspace.check_writable(entry.path) != entry.path:
                raise ToolError(f"{entry.path} leads elsewhere through a link now")
        except ToolError as exc:
            raise errors.CliAgentError(f"undo refused: {exc.message}; nothing was changed") from None
        restored = journal.blob(entry.before) if entry.before is not None else None
        plan.append(reverting_change(entry.path, current, restored, mode=entry.mode,
                                     summary=f"undo turn {target.number}"))
        now[entry.path] = restored
    return plan, emptied


def _replaced(path: str, now: dict[str, bytes | None], emptied: dict[str, list[str]]) -> bool:
    """Whether `path` or a folder above it is not on disk as it will be when its change comes: a folder removed
    first, or a file the plan deletes first (a folder comes back in its place)."""
    parts = path.split("/")
    above = ["/".join(parts[:i]) for i in range(1, len(parts))]
    return path in emptied or any(p in now and now[p] is None for p in above)


def _current(workspace: Workspace, path: str, now: dict[str, bytes | None], emptied: dict[str, list[str]]
             ) -> bytes | None:
    """The bytes at `path` when its change comes: None under a file the plan deletes first, and None for a folder
    whose every file the plan deletes first (it is removed then, `emptied`); else `current_bytes`."""
    if _replaced(path, now, emptied):
        return None
    try:
        return current_bytes(workspace, path)
    except ToolError:
        folder = workspace.root / workspace.relative(path)
        dirs = _emptied_by(folder, path, now)
        if dirs is None:
            raise
        emptied[path] = dirs
        return None


def _emptied_by(folder: Path, rel: str, now: dict[str, bytes | None]) -> list[str] | None:
    """The folders at and below `folder` (not a link) when the plan so far deletes every file in it, else None."""
    if not stat.S_ISDIR(os.lstat(folder).st_mode):
        return None
    dirs = [rel]
    for top, names, files in os.walk(folder):
        inner = os.path.relpath(top, folder)
        base = rel if inner == "." else f"{rel}/{inner}"
        if any(f"{base}/{name}" not in now or now[f"{base}/{name}"] is not None for name in files):
            return None
        links = [n for n in names if os.path.islink(os.path.join(top, n))]
        if links:
            return None
        dirs += [f"{base}/{name}" for name in names]
    return dirs


def _mode(workspace: Workspace, rel: str) -> int | None:
    try:
        return os.lstat(workspace.root / workspace.relative(rel)).st_mode & 0o7777
    except OSError:
        return None


# -- the reversal engine, shared with replay's rewind ------------------------------------------------------------

def reverting_change(path: str, current: bytes | None, restored: bytes | None, *, mode: int | None,
                     summary: str) -> Change:
    """The change that puts `restored` back where `current` is now (None: no file), for `Workspace.apply`: its
    "unchanged since read" check makes a file that changed meanwhile refuse the write."""
    kind: ChangeKind = "delete" if restored is None else "create" if current is None else "write"
    return Change(tool="undo", kind=kind, path=path, before=current, after=restored, mode=mode, summary=summary)


def current_bytes(workspace: Workspace, rel: str) -> bytes | None:
    """The file's bytes now (None: missing); a link anywhere on the way or a special file is a ToolError."""
    with locate_in(str(workspace.root), tuple(workspace.relative(rel).split("/")), follow=False) as loc:
        if loc.stat is None:
            return None
        fd = open_regular(loc)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(FILE_MAX + 1)


def remove_empty_dirs(root: Path, dirs: Iterable[str]) -> None:
    """rmdir (never recursive, never through a link) each of the folders `dirs` (relative to `root`) that is empty,
    deepest first."""
    for rel in sorted(set(dirs), key=lambda d: -d.count("/")):
        with contextlib.suppress(Exception), locate_in(str(root), tuple(rel.split("/")), follow=False) as loc:
            if loc.stat is not None and loc.tail and stat.S_ISDIR(loc.stat.st_mode):
                os.rmdir(loc.tail[-1], dir_fd=loc.dir_fd)


def shown_path(path: str) -> str:
    """A path for the terminal: a name that is not UTF-8 (surrogate escapes) shows as \\udcXX, never crashes."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def render_turns(turns: list[Turn]) -> str:
    """`cli-agent undo --list`, `/undo list`: each turn with the prompt that made it and its changes (time, tool,
    kind, path), oldest first; the newest turn not undone yet, the one `/undo` reverts, is marked."""
    if not turns:
        return "the undo journal of this workspace is empty"
    newest = next((t.number for t in reversed(turns) if not t.undone), None)
    lines = []
    for t in turns:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t.time))
        prompt = f"  {clip(t.prompt, 60)!r}" if t.prompt else ""
        mark = "  (undone)" if t.undone else "  ← newest: /undo reverts it" if t.number == newest else ""
        lines.append(esc(f"turn {t.number}  {stamp}  session {t.session or '-'}{prompt}{mark}"))
        for e in t.changes:
            lines.append(f"  {time.strftime('%H:%M:%S', time.localtime(e.time))}  {e.tool:<12} {e.kind:<6} "
                         f"{esc(shown_path(e.path))}")
    return "\n".join(lines)


def turns_json(turns: list[Turn]) -> list[dict[str, Any]]:
    return [{"turn": t.number, "session": t.session, "time": t.time, "undone": t.undone, "prompt": t.prompt,
             "changes": [{"time": e.time, "tool": e.tool, "kind": e.kind, "path": e.path} for e in t.changes]}
            for t in turns]

"""Undoing a turn of the undo journal, and showing the journal: `undo`, `cli-agent undo --list` and `/undo`.

`undo(journal, turn)` reverts one turn, newest change first, byte for byte and mode included, through a `Workspace`
(containment, no links, no hard-linked targets, `apply`'s "unchanged since read" check). It is the user's action,
so user locks do not stop it; protected paths still do (the agent can never have changed them). Before anything is
written, every file is checked to be as the agent left it (the recorded after-sha256): if one is not, nothing is
reverted and the error names it. Git's index and refs, and every file the turn did not change, are never touched.
The folders the turn's changes created are removed again when they are left empty, and an "undone" line is
appended to the journal, all under the journal's lock.

`render_turns` and `turns_json` show the journal's turns (`cli-agent undo --list [--json]`);
`register_repl_commands` adds the REPL's `/undo [N|list]`.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent import errors
from cli_agent.journal import Journal, Turn

if TYPE_CHECKING:
    from cli_agent.change import Change, ChangeKind
    from cli_agent.sandbox import Workspace
    from cli_agent.ui.commands import CommandContext, CommandRegistry

__all__ = ["Undone", "register_repl_commands", "render_turns", "turns_json", "undo"]


@dataclass(frozen=True)
class Undone:
    turn: int
    done: tuple[str, ...]  # one line per file: "restored a.py", "removed new.txt", "recreated old.txt"


# -- undoing -------------------------------------------------------------------------------------------------------

def undo(journal: Journal, turn: int | None = None) -> Undone:
    """Revert `turn` (default: the newest turn not undone yet) of `journal`; see the module docstring."""
    from cli_agent.envelope import ToolError
    from cli_agent.sandbox import DEFAULT_PROTECTED, Workspace

    workspace = Workspace(journal.root, protected=DEFAULT_PROTECTED)
    if not journal.file.exists():
        raise errors.UsageError(f"nothing to undo in {journal.root}: cli-agent has not changed a file here")
    with journal.exclusive():
        target = _pick(journal, turn)
        plan = _plan(journal, workspace, target)
        done: list[str] = []
        for change in plan:
            try:
                workspace.apply(change)
            except ToolError as exc:  # someone changed the file since it was checked, just now
                shown = "; ".join(done) or "nothing"
                raise errors.CliAgentError(f"undo of turn {target.number} stopped at {change.path}: "
                                           f"{exc.message} (done so far: {shown}); run undo again to "
                                           f"finish") from None
            done.append({"delete": "removed", "create": "recreated"}.get(change.kind, "restored")
                        + f" {_shown(change.path)}")
        _remove_empty_dirs(journal.root, target)
        journal.mark_undone(target.number, sorted({c.path for c in plan}))
    return Undone(target.number, tuple(done))


def _pick(journal: Journal, turn: int | None) -> Turn:
    turns = journal.turns()
    if turn is None:
        left = [t for t in turns if not t.undone]
        if not left:
            raise errors.UsageError(f"nothing to undo in {journal.root}: every turn in the journal is undone "
                                    f"already (see cli-agent undo --list)")
        return left[-1]
    found = next((t for t in turns if t.number == turn), None)
    if found is None:
        raise errors.UsageError(f"turn {turn} is not in the undo journal of {journal.root} (see cli-agent undo "
                                f"--list)")
    if found.undone:
        raise errors.UsageError(f"turn {turn} was undone already")
    return found


def _plan(journal: Journal, workspace: Workspace, target: Turn) -> list[Change]:
    """The changes that revert `target`, checked against the files as they are now; nothing is written."""
    from cli_agent.change import Change
    from cli_agent.envelope import ToolError

    now: dict[str, bytes | None] = {}
    plan: list[Change] = []
    for entry in reversed(target.changes):
        if entry.path not in now:
            try:
                now[entry.path] = _current(workspace, entry.path)
            except ToolError as exc:
                raise errors.CliAgentError(f"undo refused: {entry.path} can't be read ({exc.message}); "
                                           f"nothing was changed") from None
        current = now[entry.path]
        sha = hashlib.sha256(current).hexdigest() if current is not None else None
        if sha == entry.before:
            continue  # never written, or reverted by an earlier, interrupted undo
        if sha != entry.after:
            raise errors.CliAgentError(
                f"undo refused: {entry.path} changed since the agent wrote it (turn {target.number}, "
                f"{entry.tool}); nothing was changed. Revert it by hand, or undo another turn")
        restored = journal.blob(entry.before) if entry.before is not None else None
        kind: ChangeKind = "delete" if restored is None else "create" if current is None else "write"
        plan.append(Change(tool="undo", kind=kind, path=entry.path, before=current, after=restored,
                           mode=entry.mode, summary=f"undo turn {target.number}"))
        now[entry.path] = restored
    return plan


def _current(workspace: Workspace, rel: str) -> bytes | None:
    """The file's bytes now (None: missing); a link anywhere on the way or a special file is a ToolError."""
    from cli_agent.beneath import locate_in, open_regular
    from cli_agent.tools.files import FILE_MAX

    with locate_in(str(workspace.root), tuple(workspace.relative(rel).split("/")), follow=False) as loc:
        if loc.stat is None:
            return None
        fd = open_regular(loc)
    with os.fdopen(fd, "rb") as fh:
        return fh.read(FILE_MAX + 1)


def _remove_empty_dirs(root: Path, target: Turn) -> None:
    """rmdir (never recursive) the folders the turn's changes created, deepest first, if they are empty."""
    from cli_agent.beneath import locate_in

    dirs = sorted({d for e in target.changes for d in e.dirs}, key=lambda d: -d.count("/"))
    for rel in dirs:
        with contextlib.suppress(Exception), locate_in(str(root), tuple(rel.split("/")), follow=False) as loc:
            if loc.stat is not None and loc.tail and stat.S_ISDIR(loc.stat.st_mode):
                os.rmdir(loc.tail[-1], dir_fd=loc.dir_fd)


def _shown(path: str) -> str:
    """A path for the terminal: a name that is not UTF-8 (surrogate escapes) shows as \\udcXX, never crashes."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


# -- showing it ----------------------------------------------------------------------------------------------------

def render_turns(turns: list[Turn]) -> str:
    """`cli-agent undo --list`: each turn with its changes (time, tool, kind, path), oldest first."""
    from cli_agent.ui.escape import escape_for_terminal as esc

    if not turns:
        return "the undo journal of this workspace is empty"
    lines = []
    for t in turns:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t.time))
        lines.append(f"turn {t.number}  {stamp}  session {t.session or '-'}" + ("  (undone)" if t.undone else ""))
        for e in t.changes:
            lines.append(f"  {time.strftime('%H:%M:%S', time.localtime(e.time))}  {e.tool:<12} {e.kind:<6} "
                         f"{esc(_shown(e.path))}")
    return "\n".join(lines)


def turns_json(turns: list[Turn]) -> list[dict[str, Any]]:
    return [{"turn": t.number, "session": t.session, "time": t.time, "undone": t.undone,
             "changes": [{"time": e.time, "tool": e.tool, "kind": e.kind, "path": e.path} for e in t.changes]}
            for t in turns]


def register_repl_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    from cli_agent.ui.commands import Command

    registry.register(Command("undo", "revert the last turn's file changes", _repl_undo, "[N|list]",
                              help="/undo reverts the newest turn's changes (created files removed, deleted ones "
                                   "restored, modes kept); /undo N reverts turn N; /undo list shows the turns. It "
                                   "refuses, naming the file, when a file changed since the agent wrote it.",
                              complete=lambda c, args: ["list"]))


def _repl_undo(ctx: CommandContext, args: str) -> None:
    from rich.text import Text

    from cli_agent.messages import Message
    from cli_agent.ui.escape import escape_for_terminal as esc

    journal = getattr(ctx.session, "journal", None) or Journal(ctx.session.workspace.root)
    word = args.strip()
    try:
        if word in ("list", "--list"):
            ctx.console.print(Text(render_turns(journal.turns())))
            return
        if word and not word.isdigit():
            ctx.console.print(Text(f"usage: /undo [N|list], not {esc(word)!r}", style="yellow"))
            return
        undone = undo(journal, int(word) if word else None)
    except errors.CliAgentError as exc:
        ctx.console.print(Text(esc(str(exc)), style="yellow"))
        return
    ctx.console.print(Text(esc(f"undid turn {undone.turn}: " + (", ".join(undone.done) or "nothing left to "
                                                                                             "revert")), style="green"))
    ctx.session.agent.history.append(Message("user", f"(The user undid turn {undone.turn} of file changes: "
                                                     f"{', '.join(undone.done) or 'nothing'}. Read files again "
                                                     f"before changing them.)"))

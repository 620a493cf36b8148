"""`/diff`: this session's changes to the workspace as one diff, from the undo journal.

Each file this session changed (in a turn not undone) is compared from what it was before the session's first
change to it (the journal's before-image) to what it is now on disk, so later edits by hand show too.
"""

from __future__ import annotations

import difflib
from typing import TYPE_CHECKING

from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command

if TYPE_CHECKING:
    from cli_agent.fs import Workspace
    from cli_agent.history import Journal
    from cli_agent.ui.repl.commands.commands import Command, CommandContext


def session_diff(journal: Journal, workspace: Workspace, session_id: str) -> tuple[str, list[str]]:
    """(the unified diff of the session's files, notes about files it cannot show)."""
    firsts: dict[str, str | None] = {}  # path -> sha of the content before the session first changed it
    for turn in journal.turns():
        if turn.session != session_id or turn.undone:
            continue
        for entry in turn.changes:
            firsts.setdefault(entry.path, entry.before)
    parts: list[str] = []
    notes: list[str] = []
    for path, before_sha in firsts.items():
        try:
            before = journal.blob(before_sha) if before_sha else b""
            after = workspace.read_bytes(path) if workspace.exists(path) else b""
        except Exception as exc:  # a missing blob or an unreadable file: said, the rest still shown
            notes.append(f"{path}: {exc}")
            continue
        if before == after:
            continue
        if b"\0" in before[:8192] or b"\0" in after[:8192]:
            notes.append(f"{path}: binary file changed")
            continue
        old = before.decode("utf-8", errors="replace").splitlines(keepends=True)
        new = after.decode("utf-8", errors="replace").splitlines(keepends=True)
        parts.extend(difflib.unified_diff(old, new, "/dev/null" if before_sha is None else f"a/{path}",
                                          f"b/{path}" if after or workspace.exists(path) else "/dev/null"))
        if parts and not parts[-1].endswith("\n"):
            parts[-1] += "\n"
    return "".join(parts), notes


def _diff(ctx: CommandContext, args: str) -> None:
    from rich.syntax import Syntax  # deferred: Pygments, when a diff is first coloured

    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.session import journal_for

    session = ctx.session
    journal = session.journal or journal_for(session.workspace.root)
    if not session.session_id:
        ctx.console.print(Text("this session is not recorded, so it has no journal to diff", style="dim"))
        return
    diff, notes = session_diff(journal, session.workspace, session.session_id)
    if not diff and not notes:
        ctx.console.print(Text("no changes in this session", style="dim"))
        return
    added = sum(1 for line in diff.splitlines() if line.startswith("+") and not line.startswith("+++"))
    removed = sum(1 for line in diff.splitlines() if line.startswith("-") and not line.startswith("---"))
    files = sum(1 for line in diff.splitlines() if line.startswith("+++ "))
    if diff:
        ctx.console.print(Syntax(esc(diff.rstrip("\n")), "diff", theme="ansi_dark", word_wrap=True,
                                 background_color="default"))
    for note in notes:
        ctx.console.print(Text(esc(note), style="yellow"))
    ctx.console.print(Text(f"{files} file{'s' if files != 1 else ''} changed this session, +{added} -{removed} "
                           "lines (/undo reverts a turn)", style="dim"))


def diff_command() -> Command:
    return Command("diff", "this session's changes as one diff", _diff,
                   help="Every file this session changed, from before its first change to now (from the undo "
                        "journal); turns undone are left out.")

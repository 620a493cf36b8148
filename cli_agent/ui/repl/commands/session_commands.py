"""Sessions in the front ends: the REPL's `/resume` and `cli-agent sessions`, on top of the session index."""

from __future__ import annotations

import dataclasses
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cli_agent.contracts import CliAgentError, UsageError, clip, json_for_output
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command
from cli_agent.ui.view import preview

if TYPE_CHECKING:
    from cli_agent.history import SessionEntry
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry

__all__ = ["print_sessions"]

PICK_MAX = 20  # sessions the picker lists


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("resume", "continue an earlier session of this workspace", _repl_resume, "[N|ID]",
                              help="/resume lists this workspace's sessions, last used first, to pick with the arrow "
                                   "keys (a preview shows when, how many turns, which files changed and the first "
                                   "message); /resume N or /resume ID picks one at once. The newest turns are shown "
                                   "again. The conversation goes on where that "
                                   "session ended, in a new trace; this session is closed (its trace stays). A "
                                   "session whose trace is missing or damaged is listed with the reason and cannot "
                                   "be resumed."))


def _repl_resume(ctx: CommandContext, args: str) -> None:
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import SessionIndex, load_resumable
    from cli_agent.session import open_session, resume_into

    def say(text: str, style: str = "") -> None:
        ctx.console.print(Text(esc(text), style=style))

    current = ctx.session
    try:
        listed = SessionIndex().list(current.workspace.root, limit=PICK_MAX + 1)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index: {exc}") from exc
    rows = [(e, e.problem()) for e in listed if e.id != current.session_id][:PICK_MAX]
    if not rows:
        say("no earlier session in this workspace to resume")
        return
    resumable = [e for e, problem in rows if problem is None]
    choice = args.strip()
    if not choice:
        picked = _picked(ctx, rows)
        if picked is None:
            say("nothing resumed")
            return
    else:
        picked = _pick(rows, resumable, choice)
        if picked is None:
            say(f"no session {choice!r} in the list: give its number (1-{len(resumable)}) or its id", "yellow")
            return
    entry, trace = load_resumable(current.workspace.root, picked.id)  # damaged: TraceError, one line
    settings = dataclasses.replace(current.settings, trace=None)  # a --trace file holds the current session
    new = open_session(settings, interactive=True, provider_factory=lambda s: current.provider)
    try:
        resume_into(new, entry, trace)
    except BaseException:
        new.trace.close()  # the provider is still the current session's
        raise
    new.set_mode(current.agent.policy.mode)  # keep what /approval set
    ctx.replace_session(new)
    say(f"resumed session {entry.id} ({len(new.agent.history)} messages): {clip(entry.first_message)}", "green")
    show = getattr(ctx, "show_resumed", None)
    if show is not None:
        show(new, entry.trace_path)


def _picked(ctx: CommandContext, rows: list[tuple[SessionEntry, str | None]]) -> SessionEntry | None:
    """The arrow-key picker, with a preview of the highlighted session (when, turns, files changed, its first
    message); without a terminal to pick on, a numbered list and a number."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import read_trace

    journals: dict[str, list[Any]] = {}  # each workspace's undo journal, read once for the picker

    def turns(workspace: str) -> list[Any]:
        if workspace not in journals:
            # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
            from cli_agent.session import journal_for

            try:
                journals[workspace] = journal_for(workspace).turns()
            except (CliAgentError, OSError):  # no journal to say what was undone: the trace says it all
                journals[workspace] = []
        return journals[workspace]

    def label(entry: SessionEntry, problem: str | None) -> str:
        mark = "  [cannot resume]" if problem else "  [failed]" if entry.failed else ""
        return esc(f"{_when(entry.updated)} · {entry.model or '-'} · {clip(entry.first_message, 50)}{mark}")

    def shown(i: int) -> str:
        entry, problem = rows[i]
        if problem:
            return esc(f"cannot resume: {problem}")
        try:
            return f"session {entry.id} · " + preview(read_trace(entry.trace_path), turns(entry.workspace), entry.id)
        except Exception as exc:  # a trace that broke since it was listed
            return esc(f"cannot preview: {exc}")

    while True:
        at = ctx.choose("Resume which session?", [label(e, p) for e, p in rows], shown, 0)
        if at is None:
            return None
        entry, problem = rows[at]
        if problem is None:
            return entry
        ctx.console.print(f"session {entry.id} cannot be resumed: {esc(problem)}", style="yellow", markup=False)


def _pick(rows: list[tuple[SessionEntry, str | None]], resumable: list[SessionEntry],
          choice: str) -> SessionEntry | None:
    """The entry a picker answer names: a number of the list, or an id (or its start) of a listed session."""
    if choice.isdigit():
        n = int(choice)
        return resumable[n - 1] if 1 <= n <= len(resumable) else None
    found = [e for e, _ in rows if e.id.startswith(choice.lower())]
    return found[0] if len(found) == 1 else None


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))



def print_sessions(workspace: str | Path, *, as_json: bool = False, limit: int = 50) -> int:
    """`cli-agent sessions`: this workspace's sessions, last used first, under a header row, each line cut to the
    terminal's width; a failed one marked, one that cannot be resumed with why not."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import SessionIndex, index_key

    index = SessionIndex()
    try:
        entries = index.list(workspace, limit=limit)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index {index.path}: {exc}") from exc
    rows = [(e, e.problem()) for e in entries]
    if as_json:
        sys.stdout.write(json_for_output([{"id": e.id, "started": e.started, "updated": e.updated, "model": e.model,
                                      "first_message": e.first_message, "trace": str(e.trace_path),
                                      "turns": e.turns, "status": e.status, "failed": e.failed,
                                      "resumable": p is None, "problem": p} for e, p in rows]) + "\n")
        return 0
    if not rows:
        sys.stdout.write(esc(f"no sessions in {index_key(workspace)} yet") + "\n")
        return 0
    width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None  # a pipe gets whole lines
    model_width = min(20, max(5, *(len(e.model or "-") for e, _ in rows)))
    narrow = width is not None and width < 60 + model_width  # the first message gets a line of its own
    lines = [f"{'ID':<8}  {'LAST USED':<16}  {'MODEL':<{model_width}}  {'TURNS':>5}" +
             ("" if narrow else "  FIRST MESSAGE")]
    for entry, problem in rows:
        mark = f"[cannot resume: {problem}] " if problem else "[failed] " if entry.failed else ""
        model = clip(entry.model or "-", model_width)
        row = f"{entry.id:<8}  {_when(entry.updated):<16}  {model:<{model_width}}  {entry.turns or '-':>5}"
        message = f"{mark}{' '.join(entry.first_message.split())}"
        lines += [row, "  " + message] if narrow else [f"{row}  {message}"]
    footer = ["continue the last: cli-agent -c", "a chosen one: cli-agent --resume ID"]
    joined = " · ".join(footer)
    for line in [*lines, *([joined] if width is None or len(joined) <= width else footer)]:
        line = esc(line)
        sys.stdout.write((line if width is None or len(line) <= width else line[:width - 1] + "…") + "\n")
    return 0

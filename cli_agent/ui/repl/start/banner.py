"""What the REPL says of itself at the start and at the end: the banner (the version and the help hint; the model and
the workspace once the session is open), the announcement of a session opened behind the prompt, and the goodbye
line with the session's id.

Rich is imported where it draws, so the first prompt does not wait for it: a banner printed before the session is
open goes through prompt_toolkit instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from prompt_toolkit import print_formatted_text
from prompt_toolkit.formatted_text import FormattedText
from rich.text import Text

from cli_agent import __version__
from cli_agent.contracts import clip
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.home_path import short_path

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.session import Session
    from cli_agent.ui.repl.start.startup import Startup


class Shown(Protocol):
    """What the banner draws from: the REPL's start-up, its console and its prompt's terminal (`ReplContext`)."""

    startup: Startup
    notes: list[str]
    io: dict[str, Any]

    @property
    def console(self) -> Console: ...

    @property
    def console_made(self) -> bool: ...


def banner(repl: Shown) -> None:
    """The version and the help hint; with an open session, its model and workspace (else `announce` says them
    once the start-up is done, and the line is printed by prompt_toolkit: Rich loads behind the prompt)."""
    session = repl.startup.session
    if session is None and not repl.console_made:
        print_formatted_text(FormattedText([("bold", f"cli-agent {__version__}"), ("", " · /help for help")]),
                             output=repl.io["output"])
        return

    line = Text(f"cli-agent {__version__}", style="bold")
    if session is not None:
        line.append(" · ").append_text(_where(repl, session))
    line.append(" · /help for help", style="dim")
    repl.console.print(line)
    if session is not None:
        say_notes(repl, [*session.notes, *repl.notes])


def announce(repl: Shown, session: Session) -> None:
    """The model and the workspace of a session opened behind the prompt, and its notes."""
    repl.console.print(_where(repl, session))
    say_notes(repl, [*session.notes, *repl.notes])


def say_notes(repl: Shown, notes: Iterable[str]) -> None:
    for note in notes:
        repl.console.print(Text(esc(note), style="dim"))


def goodbye(repl: Shown) -> None:
    """On the way out: the session's id and how to go on with it."""
    session = repl.startup.session if repl.startup.ready else None
    if session is None or not session.session_id or not session.agent.history:
        return
    repl.console.print(Text.assemble(("session ", "dim"), (session.session_id, "bold"),
                                     (" · resume it with: ", "dim"), f"cli-agent --resume {session.session_id}"))


def _where(repl: Shown, session: Session) -> Any:
    """model · workspace [· resumed session ID: its first message]"""
    line = Text.assemble((esc(session.settings.model or "no model"), "cyan"), " · ",
                         esc(short_path(str(session.workspace.root))))
    entry = repl.startup.resumed
    if entry is not None:
        line.append(f" · resumed session {esc(entry.id)}: {esc(clip(entry.first_message))}", style="green")
    return line

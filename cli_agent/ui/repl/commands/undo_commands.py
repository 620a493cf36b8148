"""The REPL's `/undo [N|list]`, on top of `history/undo.py` (which also shows the journal's turns)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cli_agent.contracts import errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command
from cli_agent.ui.view import fit_lines

if TYPE_CHECKING:
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("undo", "revert the last turn's file changes", _repl_undo, "[N|list]",
                              help="/undo reverts the newest turn's changes (created files removed, deleted ones "
                                   "restored, modes kept); /undo N reverts turn N; /undo list shows the turns. It "
                                   "refuses, naming the file, when a file changed since the agent wrote it.",
                              complete=lambda c, args: ["list"]))


def _repl_undo(ctx: CommandContext, args: str) -> None:
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import render_turns, undo_turn
    from cli_agent.session import journal_for

    journal = getattr(ctx.session, "journal", None) or journal_for(ctx.session.workspace.root)
    word = args.strip()
    try:
        if word in ("list", "--list"):
            ctx.console.print(Text(fit_lines(render_turns(journal.turns()), ctx.console.width)))
            return
        if word and not word.isdigit():
            ctx.console.print(Text(f"usage: /undo [N|list], not {esc(word)!r}", style="yellow"))
            return
        undone = undo_turn(journal, int(word) if word else None, listing="/undo list")
    except errors.CliAgentError as exc:
        ctx.console.print(Text(fit_lines(esc(str(exc)), ctx.console.width), style="yellow"))
        return
    ctx.console.print(Text(esc(f"undid turn {undone.turn}: " + (", ".join(undone.done) or "nothing left to "
                                                                                             "revert")), style="green"))
    ctx.session.add_note(f"(The user undid turn {undone.turn} of file changes: {', '.join(undone.done) or 'nothing'}. "
                         "Read files again before changing them.)")

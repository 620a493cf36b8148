"""The REPL's `/undo [N|list]`, on top of `history/undo.py` (which also shows the journal's turns), and `/rewind`
(`history/rewind.py`): back to before an earlier prompt, the conversation, the files or both, the prompt put back in
the input to edit. Esc Esc on an empty prompt opens it too."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

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
    registry.register(Command("rewind", "go back to before an earlier prompt: the conversation, the files, or both",
                              _repl_rewind, "[N [both|conversation|files]]",
                              help="/rewind lists your prompts, newest first, each with the files its turn changed; "
                                   "pick one, then what to restore: the conversation (as it was before that prompt), "
                                   "the files (every turn from it on undone), or both. The prompt comes back in the "
                                   "input to edit. Esc Esc on an empty prompt opens it. A later resume starts from "
                                   "the rewound point; the trace keeps what happened.",
                              complete=lambda c, args: list(RESTORE) if args.strip() else []))


RESTORE = {"both": "the conversation and the files", "conversation": "the conversation only",
           "files": "the files only"}


def _repl_rewind(ctx: CommandContext, args: str) -> None:
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import read_trace, rewind_points

    session = ctx.session
    points = rewind_points(read_trace(session.trace_path, complete=False), getattr(session, "journal", None),
                           session.session_id)
    if not points:
        ctx.console.print(Text("nothing to rewind: no prompt in this conversation yet", style="dim"))
        return
    words = args.split()
    if words and (not words[0].isdigit() or not 1 <= int(words[0]) <= len(points) or len(words) > 2
                  or (len(words) == 2 and words[1] not in RESTORE)):
        ctx.console.print(Text(f"usage: /rewind [N [both|conversation|files]] (N: 1-{len(points)}, 1 the newest)",
                               style="yellow"))
        return
    at = int(words[0]) - 1 if words else ctx.choose(
        "Rewind to before which prompt? (newest first)",
        [f"{' '.join(p.prompt.split())[:70]}  ({', '.join(p.files) or 'no files changed'})" for p in points],
        None, 0)
    if at is None:
        ctx.console.print(Text("nothing rewound", style="dim"))
        return
    what = words[1] if len(words) == 2 else None
    if what is None:
        picked = ctx.choose("Restore what?", list(RESTORE.values()), None, 0)
        what = list(RESTORE)[picked] if picked is not None else None
    if what is None:
        ctx.console.print(Text("nothing rewound", style="dim"))
        return
    _rewind(ctx, points[at], what)


def _rewind(ctx: CommandContext, point: Any, what: str) -> None:
    from cli_agent.history import rewind_files  # deferred: the agent's stack loads behind the REPL's first prompt
    from cli_agent.session import journal_for  # deferred: the agent's stack loads behind the REPL's first prompt

    session = ctx.session
    if what in ("both", "files") and point.turns:
        journal = getattr(session, "journal", None) or journal_for(session.workspace.root)
        try:
            done = rewind_files(journal, point)
        except errors.CliAgentError as exc:
            ctx.console.print(Text(fit_lines(esc(str(exc)), ctx.console.width), style="yellow"))
            return
        ctx.console.print(Text(esc("files restored: " + "; ".join(done)), style="green"))
        if what == "files":
            session.add_note(f"(The user put the files back as they were before the prompt {point.prompt!r}: "
                             f"{'; '.join(done)}. Read files again before changing them.)")
    if what in ("both", "conversation"):
        session.rewind(point.run_id)
        getattr(ctx, "conversation_replaced", lambda: None)()
        ctx.console.print(Text("conversation rewound to before: " + esc(" ".join(point.prompt.split())[:70]),
                               style="green"))
    ctx.draft = point.prompt  # back in the input, to edit and send again


def _repl_undo(ctx: CommandContext, args: str) -> None:
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

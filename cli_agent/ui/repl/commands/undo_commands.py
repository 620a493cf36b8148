"""Undo in the front ends: `cli-agent undo --list [--json]` and the REPL's `/undo [N|list]`, on top of `undo.py`."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors
from cli_agent.contracts.escape import clip
from cli_agent.contracts.escape import escape_for_terminal as esc
from cli_agent.history.journal import Journal, Turn
from cli_agent.history.undo import shown_path, undo
from cli_agent.ui.repl.commands.commands import Command

if TYPE_CHECKING:
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry

__all__ = ["register_commands", "render_turns", "turns_json"]


# -- showing the journal -----------------------------------------------------------------------------------------------

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


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("undo", "revert the last turn's file changes", _repl_undo, "[N|list]",
                              help="/undo reverts the newest turn's changes (created files removed, deleted ones "
                                   "restored, modes kept); /undo N reverts turn N; /undo list shows the turns. It "
                                   "refuses, naming the file, when a file changed since the agent wrote it.",
                              complete=lambda c, args: ["list"]))


def _repl_undo(ctx: CommandContext, args: str) -> None:
    from rich.text import Text

    journal = getattr(ctx.session, "journal", None) or Journal(ctx.session.workspace.root)
    word = args.strip()
    try:
        if word in ("list", "--list"):
            ctx.console.print(Text(render_turns(journal.turns())))
            return
        if word and not word.isdigit():
            ctx.console.print(Text(f"usage: /undo [N|list], not {esc(word)!r}", style="yellow"))
            return
        undone = undo(journal, int(word) if word else None, listing="/undo list")
    except errors.CliAgentError as exc:
        ctx.console.print(Text(esc(str(exc)), style="yellow"))
        return
    ctx.console.print(Text(esc(f"undid turn {undone.turn}: " + (", ".join(undone.done) or "nothing left to "
                                                                                             "revert")), style="green"))
    ctx.session.add_note(f"(The user undid turn {undone.turn} of file changes: {', '.join(undone.done) or 'nothing'}. "
                         "Read files again before changing them.)")

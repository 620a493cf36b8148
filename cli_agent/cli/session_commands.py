"""`cli-agent sessions` and `undo`: this workspace's sessions, and its undo journal's turns.

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

from typing import Annotated

import typer

from cli_agent.cli.flags import AsJson, ConfigFile, Workspace, load
from cli_agent.contracts import escape_for_terminal, json_for_output
from cli_agent.history import render_turns, turns_json, undo_turn
from cli_agent.session import journal_for


def sessions_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None,
                 as_json: AsJson = False) -> int:
    """This workspace's sessions, last used first; continue one with -c or --resume ID."""
    from cli_agent.ui.repl import print_sessions  # deferred: the REPL's stack (prompt_toolkit), only for the REPL

    return print_sessions(load(ctx, workspace=workspace, config=config).settings.workspace, as_json=as_json)


def undo_cmd(ctx: typer.Context,
             turn: Annotated[int | None, typer.Option("--turn", "-t", help="Undo this turn (see --list) instead "
                                                                           "of the newest one.")] = None,
             list_turns: Annotated[bool, typer.Option("--list", help="Show the journal's turns and their "
                                                                     "changes; change nothing.")] = False,
             as_json: Annotated[bool, typer.Option("--json", help="With --list: as JSON.")] = False,
             workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Revert the agent's changes of the newest turn (or --turn N) byte for byte, from the undo journal."""
    journal = journal_for(load(ctx, workspace=workspace, config=config).settings.workspace)
    if list_turns:
        turns = journal.turns()
        typer.echo(json_for_output(turns_json(turns), indent=2) if as_json
                   else escape_for_terminal(render_turns(turns)))
        return 0
    undone = undo_turn(journal, turn)
    typer.echo(escape_for_terminal(f"undid turn {undone.turn}: " + ("; ".join(undone.done) or "nothing left to "
                                                                                             "revert")))
    return 0

"""`/facts` in the REPL: the project's facts, and the user's decision on each of the model's proposals.

`/facts` prints the listing (`facts.render_list`), then asks about each pending proposal (one key): y commits it,
n rejects it, Enter leaves it pending, Esc or Ctrl-C stops asking. `/facts list` only lists; `/facts commit
ID` and `/facts reject ID` decide on one. A decision that fails (no such proposal any more, a broken file) is one
line and the REPL goes on.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text

from cli_agent.contracts import UsageError, clip
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command

if TYPE_CHECKING:
    from cli_agent.facts import FactStore
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry


def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("facts", "the project's facts; commit or reject the model's proposals", _repl_facts,
                              "[commit|reject ID]",
                              help="/facts lists the committed facts, the proposals and the locks, then asks about "
                                   "each proposal: y commits it (the model sees it from the next turn on), n "
                                   "rejects it, Enter leaves it pending; Esc or Ctrl-C stops asking. "
                                   "/facts list only lists; /facts commit ID and /facts reject ID decide on one.",
                              complete=lambda c, args: ["list", "commit", "reject"]))


def _repl_facts(ctx: CommandContext, args: str) -> None:
    from cli_agent.facts import FactStore, render_list  # deferred: the project's facts load behind the first prompt

    store = FactStore(ctx.session.workspace.root)
    word, _, rest = args.partition(" ")
    if word in ("commit", "reject") and rest.strip():
        _decide(ctx, store, word, rest.strip())
        return
    if word not in ("", "list"):
        ctx.console.print(Text(f"usage: /facts [list|commit ID|reject ID], not {esc(args)!r}", style="yellow"))
        return
    ctx.console.print(Text(esc(render_list(store, how="/facts"))))
    if word == "list":
        return
    for proposal in store.pending():
        answer = ctx.ask_key(f"{proposal.id} {clip(proposal.text, 70)!r}: commit? [y/n, Enter: later] ")
        if answer in ("", "\x1b"):  # Ctrl-C, Ctrl-D or Esc
            ctx.console.print(Text("stopped: the rest stay pending", style="yellow"))
            return
        choice = {"y": "commit", "n": "reject"}.get(answer)
        if choice is not None:
            _decide(ctx, store, choice, proposal.id)


def _decide(ctx: CommandContext, store: FactStore, choice: str, fact_id: str) -> None:
    try:
        if choice == "commit":
            fact = store.commit(fact_id)
            said, style = f"committed {fact.id}: {fact.text} (the model sees it from the next turn)", "green"
        else:
            proposal = store.reject(fact_id)
            said, style = f"rejected {proposal.id}: {proposal.text}", ""
    except UsageError as exc:  # no such proposal (any more), a broken file: one line, the REPL goes on
        said, style = str(exc), "yellow"
    ctx.console.print(Text(esc(said), style=style))

"""The REPL's commands about the conversation itself: `/clear`, `/compact [focus]`, `/expand`, and compacting on
its own near the context window.

`/clear` starts a new session (the old one stays to resume); `/compact` writes a `ConversationReset` to the session's
trace (`cli_agent.agent.compaction`), so a resume restores only what was live and a replay resets at the same place.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cli_agent.contracts import ConversationReset, RunStarted, StopReason, errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command
from cli_agent.ui.repl.commands.diff_command import diff_command
from cli_agent.ui.repl.toolbar import context_use
from cli_agent.ui.view import expanded, hanging

if TYPE_CHECKING:
    from cli_agent.ui.repl.commands.commands import Command, CommandContext

AUTO_COMPACT_AT = 0.85  # share of the context window at which the REPL compacts before the next turn


def _clear(ctx: CommandContext, args: str) -> None:
    """A new session on the same model: the model forgets the conversation, and the old session stays listed (in
    /resume and `cli-agent sessions`) to go back to."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.session import open_session

    session = ctx.session
    if not session.agent.history:
        ctx.console.print(Text("the conversation is empty already", style="dim"))
        return
    settings = dataclasses.replace(session.settings, trace=None)  # a --trace file holds the session it names
    new = open_session(settings, interactive=True, provider_factory=lambda s: session.provider)
    new.set_mode(session.agent.policy.mode)  # keep what /approval set
    old = session.session_id
    ctx.replace_session(new)
    ctx.console.print(Text("started a new session: the model forgets the conversation; files stay as they are"))
    if old:
        ctx.console.print(hanging(Text("  "), Text(f"the old one is session {esc(old)}: /resume, or cli-agent "
                                                   f"--resume {esc(old)}", style="dim")))


def compact(ctx: CommandContext, focus: str = "", *, auto: bool = False) -> bool:
    """The model summarises the conversation and the summary replaces it; False (the conversation goes on whole)
    when the summary could not be made."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.agent import compact_prompt

    session = ctx.session
    agent = session.agent
    if not agent.history:
        ctx.console.print(Text("nothing to compact: the conversation is empty", style="dim"))
        return False

    used = agent.context_use()[0]  # counted as the summary will be: the same estimate before and after
    read_only = [spec.name for spec in session.registry.specs() if not spec.mutates and not spec.requires_approval]
    kept = task_so_far(session)  # before the summary's own run joins the trace
    finished = ctx.drive(agent.run(compact_prompt(focus), ctx.approver, only_tools=read_only))
    summary = finished.answer.strip()
    if finished.stop_reason is not StopReason.DONE or not summary:
        ctx.console.print(Text(f"not compacted: {esc(finished.message or 'the model gave no summary')}; the "
                               "conversation goes on whole", style="yellow"))
        return False
    summary = f"{kept}\n\n[The model's summary of the rest]\n{summary}"
    session.reset(ConversationReset(kind="compact", summary=summary, auto=auto))
    getattr(ctx, "conversation_replaced", lambda: None)()  # the meter goes by the summary from here
    now = agent.context_use()[0]
    size = (f"about {used:,} → {now:,} tokens" if now < used else
            f"about {now:,} tokens: the conversation was no longer than what is carried over")
    ctx.console.print(Text(f"compacted: the summary above replaces the conversation ({size})", style="green"))
    return True


def task_so_far(session: Any) -> str:
    """What a compaction carries over word for word (`agent.carried_over`), from the session's trace, its turns in
    the undo journal and the project's facts."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.agent import carried_over, compact_prompt
    from cli_agent.facts import FactStore
    from cli_agent.history import read_trace

    try:
        events = [e for e in read_trace(session.trace_path, complete=False).events
                  if not isinstance(e, RunStarted) or not e.prompt.startswith(compact_prompt())]
    except errors.CliAgentError:
        events = []
    journal = getattr(session, "journal", None)
    turns = [t for t in (journal.turns() if journal is not None else []) if t.session == session.session_id
             and not t.undone and session.session_id]
    changed = [(t.number, sorted({c.path for c in t.changes})) for t in turns]
    try:
        facts = [f.text for f in FactStore(session.workspace.root).committed()]
    except errors.CliAgentError:
        facts = []
    return carried_over(events, changed, facts)


def compact_if_full(ctx: CommandContext) -> None:
    """Before a turn: near the context window, compact first, and say so."""
    measured = getattr(ctx, "context_tokens", lambda: None)()
    used, window = context_use(ctx.session, measured)
    if not window or used < AUTO_COMPACT_AT * window:
        return
    ctx.console.print(Text(f"the context is {used / window:.0%} full ({used:,} of {window:,} tokens): compacting "
                           "the conversation first", style="yellow"))
    compact(ctx, auto=True)


def _compact(ctx: CommandContext, args: str) -> None:
    compact(ctx, args)


def _expand(ctx: CommandContext, args: str) -> None:
    """The last turn whole, in order: its thinking, each plan update as its checklist, and each call with its
    result (a command with all its output; any other call with what it gave the model, bounded with `…`)."""
    turn: list[Any] = getattr(ctx, "last_turn", [])
    if not turn:
        ctx.console.print(Text("nothing to expand: the last turn made no call and had no thinking", style="dim"))
        return
    for part in expanded(turn, ctx.console.width):
        ctx.console.print(part)


def context_commands() -> list[Command]:
    return [
        Command("clear", "start a new session", _clear,
                help="A new session on the same model: the model forgets the conversation; the files stay as they "
                     "are. The old session stays in /resume and cli-agent sessions."),
        Command("compact", "replace the conversation by the model's summary of it", _compact, "[FOCUS]",
                help="The model summarises the conversation so far (FOCUS: what to keep most of) and the summary "
                     "replaces it, freeing the context window. The REPL does this on its own when the context is "
                     f"{AUTO_COMPACT_AT:.0%} full. Recorded in the trace: a resume continues from the summary."),
        Command("expand", "show the last turn's one-line calls and commands (all their output) in full",
                _expand),
        diff_command(),
    ]

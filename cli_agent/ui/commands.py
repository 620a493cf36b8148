"""Slash commands: an explicit registry of `Command` entries, and the REPL's built-ins.

A line that starts with `/` is a command and is never sent to the model (`//text` sends `/text`). An unknown name
gets "unknown command, did you mean …". The REPL's other commands live in their own `ui/*_commands.py` modules,
each with a `register_commands(registry, ctx)`; `ui/command_set.py` names them all and builds the REPL's registry.
`register(..., replace=True)` overrides a built-in. `/facts`, `/undo`, `/resume` and `/workflows` come from those
modules.
"""

from __future__ import annotations

import difflib
import enum
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Protocol

from cli_agent.ui.escape import escape_for_terminal as esc

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.config import Settings
    from cli_agent.events import EventStream, RunFinished
    from cli_agent.loop import Approver
    from cli_agent.session import Session

__all__ = ["Command", "CommandContext", "CommandRegistry", "Handler", "Outcome", "builtin_commands"]

KEYS_HELP = ("Enter sends · Meta+Enter or Ctrl-J: new line · Ctrl-R: search history · Tab: complete · "
             "@path attaches a file · //text sends /text · Esc or Ctrl-C interrupts the turn (what you type "
             "meanwhile is queued and sent next) · Ctrl-D quits")


class Outcome(enum.Enum):
    CONTINUE = "continue"
    EXIT = "exit"


class CommandContext(Protocol):
    """What a command can use: the live session (replaced by /model), the console, the registry, and the REPL's
    ways to run things and to ask the user."""

    @property
    def session(self) -> Session: ...

    @property
    def settings(self) -> Settings:
        """The settings, known before the session is open."""
        ...

    @property
    def console(self) -> Console: ...

    @property
    def commands(self) -> CommandRegistry: ...

    @property
    def approver(self) -> Approver:
        """The REPL's approval question, for runs a command drives itself (e.g. a workflow's)."""
        ...

    def drive(self, events: EventStream) -> RunFinished:
        """Feed any event stream (a run, a workflow's runs) to the trace and the renderer."""
        ...

    def run_turn(self, prompt: str, *, only_tools: Collection[str] | None = None) -> RunFinished: ...

    def ask(self, question: str, *, choices: Iterable[str] = (), default: str = "") -> str:
        """One line from the user (KeyboardInterrupt on Ctrl-C, EOFError on Ctrl-D)."""
        ...

    def choose(self, title: str, options: list[str], preview: Callable[[int], str] | None,
               selected: int) -> int | None:
        """An arrow-key pick among `options` (None: none chosen, or no terminal to ask on)."""
        ...

    def replace_session(self, session: Session) -> None:
        """Make `session` the live one (e.g. a resumed session) and close the one it replaces."""
        ...


Handler = Callable[[CommandContext, str], "Outcome | None"]
ArgCompleter = Callable[[CommandContext, str], Iterable[str]]  # (ctx, text after the name) -> candidate words


@dataclass(frozen=True)
class Command:
    name: str  # without the slash
    summary: str  # one line for /help
    handler: Handler
    usage: str = ""  # e.g. "[ask|edits|all]"
    help: str = ""  # more, for /help NAME
    category: str = "commands"  # /help groups by it; workflows use "workflow: CATEGORY"
    complete: ArgCompleter | None = None
    aliases: tuple[str, ...] = ()


class CommandRegistry:
    def __init__(self) -> None:
        self._commands: dict[str, Command] = {}
        self._aliases: dict[str, str] = {}

    def register(self, command: Command, *, replace: bool = False) -> None:
        name = command.name.lstrip("/")
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"bad command name {command.name!r}")
        if not replace and (name in self._commands or name in self._aliases):
            raise ValueError(f"/{name} is already a command")
        self._commands[name] = command
        for alias in command.aliases:
            self._aliases[alias] = name

    def copy(self) -> CommandRegistry:
        new = CommandRegistry()
        new._commands, new._aliases = dict(self._commands), dict(self._aliases)
        return new

    def get(self, name: str) -> Command | None:
        name = name.lstrip("/")
        return self._commands.get(self._aliases.get(name, name))

    def names(self) -> list[str]:
        return sorted(self._commands)

    def commands(self) -> list[Command]:
        return sorted(self._commands.values(), key=lambda c: (c.category != "commands", c.category, c.name))

    def suggest(self, name: str) -> list[str]:
        """Names close to an unknown one: those it starts, then similar spellings."""
        name = name.lstrip("/").lower()
        every = sorted(set(self._commands) | set(self._aliases))
        starts = [n for n in every if n.startswith(name) and name]
        close = difflib.get_close_matches(name, every, n=3, cutoff=0.6)
        return list(dict.fromkeys(starts + close))[:3]

    def dispatch(self, ctx: CommandContext, line: str) -> Outcome:
        name, args = [*line.strip().split(maxsplit=1), ""][:2]
        command = self.get(name)
        if command is None:
            hint = self.suggest(name)
            from rich.text import Text

            text = Text(f"unknown command {esc(name)}", style="yellow")
            text.append(", did you mean " + " or ".join("/" + h for h in hint) + "?" if hint else "", style="yellow")
            text.append("  (/help lists the commands; //text sends /text to the model)", style="dim")
            ctx.console.print(text)
            return Outcome.CONTINUE
        return command.handler(ctx, args.strip()) or Outcome.CONTINUE


# -- the built-ins ---------------------------------------------------------------------------------------------

def _say(ctx: CommandContext, text: str, style: str = "") -> None:
    from rich.text import Text

    ctx.console.print(Text(esc(text), style=style))


def _help(ctx: CommandContext, args: str) -> None:
    from rich.text import Text

    if args:
        command = ctx.commands.get(args.split()[0])
        if command is None:
            ctx.commands.dispatch(ctx, "/" + args.split()[0].lstrip("/"))
            return
        out = Text(f"/{esc(command.name)} {esc(command.usage)}".rstrip(), style="bold")
        out.append("\n  " + esc(command.summary))
        if command.help:
            out.append("\n\n" + esc(command.help))
        if command.aliases:
            out.append("\n  also: " + ", ".join("/" + esc(a) for a in command.aliases), style="dim")
        ctx.console.print(out)
        return
    out = Text()
    category = None
    for command in ctx.commands.commands():
        if command.category != category:
            category = command.category
            out.append(("" if not out else "\n") + esc(category) + ":", style="bold")
        usage = f"/{command.name} {command.usage}".rstrip()
        out.append("\n  " + esc(usage).ljust(28), style="cyan")
        out.append(" " + esc(command.summary))
    out.append("\n\n" + KEYS_HELP, style="dim")
    out.append("\nApproval answers: y yes · n no, stop the turn · f no, and tell the model what to do instead · "
               "a yes to all, this session · t yes to this tool, this session · v view all of a change. "
               "Shift+Tab cycles the approval mode (ask, edits, all).", style="dim")
    ctx.console.print(out)


def _complete_commands(ctx: CommandContext, args: str) -> Iterable[str]:
    return ctx.commands.names()


def _exit(ctx: CommandContext, args: str) -> Outcome:
    return Outcome.EXIT


def _model(ctx: CommandContext, args: str) -> None:
    from cli_agent.ui.model_commands import model_command

    model_command(ctx, args)


_MODES = {"ask": "every change is asked for",
          "edits": "creating and editing files is approved; deleting is asked for",
          "all": "every change is approved without asking"}


def _approval(ctx: CommandContext, args: str) -> None:
    from cli_agent.approval import ApprovalMode

    agent = ctx.session.agent
    if args:
        if args not in _MODES:
            _say(ctx, f"unknown approval mode {args!r}: use ask, edits or all", "yellow")
            return
        agent.policy = replace(agent.policy, mode=ApprovalMode(args), granted_tools=frozenset())
    policy = agent.policy
    _say(ctx, f"approval: {policy.mode.value}: {_MODES[policy.mode.value]}" + ("  (--yes: everything is approved)"
                                                                               if policy.yes else ""))
    if policy.granted_tools:
        _say(ctx, "approved for this session: " + ", ".join(sorted(policy.granted_tools)), "dim")


def _tools(ctx: CommandContext, args: str) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
    for column in ("tool", "category", "asks", "description"):
        table.add_column(column, overflow="fold")
    registry = ctx.session.registry
    for category in registry.categories():
        for spec in registry.by_category(category):
            table.add_row(Text(esc(spec.name), style="cyan"), Text(esc(category)),
                          Text("yes" if spec.requires_approval else "-"), Text(esc(spec.description.split(". ")[0])))
    ctx.console.print(table)


def _prompt(ctx: CommandContext, args: str) -> None:
    plan = ctx.session.agent.setup.planner(args, None)
    _say(ctx, plan.system or "(no system prompt: plain chat)")
    _say(ctx, f"fingerprint {plan.fingerprint}", "dim")


def _trace(ctx: CommandContext, args: str) -> None:
    _say(ctx, str(ctx.session.trace_path))


def _cost(ctx: CommandContext, args: str) -> None:
    usage = ctx.session.agent.usage
    _say(ctx, f"this session: {usage.prompt_tokens:,} prompt + {usage.completion_tokens:,} completion tokens = "
              f"{usage.total_tokens:,}; cost ${usage.cost_usd:.4f}" + ("" if usage.cost_usd else
                                                                      " (unknown or free for this model)"))


def builtin_commands() -> CommandRegistry:
    registry = CommandRegistry()
    for command in (
        Command("help", "list the commands, or show one", _help, "[command|workflow]", complete=_complete_commands),
        Command("exit", "leave the REPL (Ctrl-D too)", _exit, aliases=("quit",)),
        Command("model", "show the model and pick another, or switch to NAME", _model, "[NAME]",
                help="/model lists the models to pick from (this one, those used here before, one for each "
                     "provider whose API key is set, the local model); /model NAME switches to it once it is "
                     "checked (a bad name is refused and the model stays). The conversation carries over when the "
                     "new model speaks the same protocol or the conversation has no tool calls; otherwise you are "
                     "asked before a new one starts."),
        Command("approval", "show or set what is approved without asking", _approval, "[ask|edits|all]",
                help="\n".join(f"{k}: {v}" for k, v in _MODES.items()),
                complete=lambda ctx, args: list(_MODES)),
        Command("tools", "the tools the model can use", _tools),
        Command("prompt", "the system prompt the model gets", _prompt, "[TASK]",
                help="A task text shows which optional tools it would bring in."),
        Command("trace", "where this session's trace is written", _trace),
        Command("cost", "tokens and cost of this session", _cost),
    ):
        registry.register(command)
    from cli_agent.ui.context_commands import context_commands

    for command in context_commands():
        registry.register(command)
    return registry

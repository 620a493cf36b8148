"""Slash commands: an explicit registry of `Command` entries (the REPL's built-ins are in `builtin_commands`).

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
from typing import TYPE_CHECKING, Any, Protocol

from cli_agent.contracts import dataclass
from cli_agent.contracts import escape_for_terminal as esc

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.agent import Approver
    from cli_agent.config import Settings
    from cli_agent.contracts import EventStream, RunFinished
    from cli_agent.session import Session

class Outcome(enum.Enum):
    CONTINUE = "continue"
    EXIT = "exit"


class CommandContext(Protocol):
    """What a command can use: the live session (replaced by /model), the console, the registry, and the REPL's
    ways to run things and to ask the user."""

    draft: str  # what the next prompt starts with (a rewound prompt, to edit)

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

    def ask(self, question: str, *, choices: Iterable[str] = (), default: str = "", paths: bool = False) -> str:
        """One line from the user (KeyboardInterrupt on Ctrl-C, EOFError on Ctrl-D); Tab completes `choices`, or
        with `paths` the workspace's paths."""
        ...

    def ask_key(self, question: str) -> str:
        """One key from the user, lower-cased ("\\r" for Enter, "" for Ctrl-C or Ctrl-D); keys typed before the
        question was drawn never answer it (they are kept for the prompt)."""
        ...

    def choose(self, title: str, options: list[str], preview: Callable[[int], str] | None,
               selected: int) -> int | None:
        """An arrow-key pick among `options` (None: none chosen, or no terminal to ask on)."""
        ...

    def replace_session(self, session: Session) -> None:
        """Make `session` the live one (e.g. a resumed session) and close the one it replaces."""
        ...

    def keep_typed(self, keys: Any) -> None:
        """Keep what was typed while a command held the keyboard (`ui.keys.TurnKeys`, or None): finished lines are
        sent next, an unfinished one starts the next prompt."""
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
            from rich.text import Text  # deferred: Rich is not on a one-shot run's path

            text = Text(f"unknown command {esc(name)}", style="yellow")
            text.append(", did you mean " + " or ".join("/" + h for h in hint) + "?" if hint else "", style="yellow")
            text.append("  (/help lists the commands; //text sends /text to the model)", style="dim")
            ctx.console.print(text)
            return Outcome.CONTINUE
        return command.handler(ctx, args.strip()) or Outcome.CONTINUE

"""The REPL's slash commands: the built-ins, then each command module's, in this order.

A module of REPL commands defines `register_commands(registry, ctx)` (it may return one-line notes for the REPL to
show once it has started) and is named in `command_modules()`. Workflows come last: each becomes `/NAME ARGS` where
the name is still free. The hooks run behind the first prompt, once the session is open (`ctx.settings` and
`ctx.session` are there), in the start-up's thread; so the modules are imported there too (the facts and workflows
bring pydantic and jsonschema, which the prompt must not wait for).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from cli_agent.ui.repl.commands import (
    facts_commands,
    mcp_commands,
    ps_commands,
    session_commands,
    undo_commands,
    workflow_commands,
)

if TYPE_CHECKING:
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry

Register = Callable[["CommandRegistry", "CommandContext"], "Iterable[str] | None"]


def command_modules() -> tuple[tuple[str, Register], ...]:
    """Every module of REPL commands, in the order they register."""
    return (("facts", facts_commands.register_commands), ("undo", undo_commands.register_commands),
            ("sessions", session_commands.register_commands), ("mcp", mcp_commands.register_commands),
            ("processes", ps_commands.register_commands), ("workflows", workflow_commands.register_commands))


def add_commands(registry: CommandRegistry, ctx: CommandContext,
                 modules: Iterable[tuple[str, Register]] | None = None) -> list[str]:
    """Let each module register its commands; returns their notes, and one line for each that failed (a broken
    workflow folder costs its commands, not the REPL)."""
    notes: list[str] = []
    for what, register in command_modules() if modules is None else modules:
        try:
            notes.extend(register(registry, ctx) or ())
        except Exception as exc:
            notes.append(f"the {what} commands could not be added: {type(exc).__name__}: {exc}")
    return notes

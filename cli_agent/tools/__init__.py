"""Tool handlers, by the name their spec in tool_specs/ gives.

A handler is `handler(ctx, **arguments)`: its keyword parameters are exactly the properties of the spec's JSON
Schema (required ones without a default), which the spec loader checks at start-up. A read-only handler returns
JSON-able data; a mutating one returns a `Change` and writes nothing (the dispatcher applies it after approval).
Failures the model can act on raise `ToolError`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cli_agent.sandbox import Workspace
    from cli_agent.tools.commands import CommandSetup
    from cli_agent.tools.seen import SeenFiles

__all__ = ["ToolContext", "ToolLimits", "handlers"]


@dataclass(frozen=True)
class ToolLimits:
    read_max_bytes: int = 256 * 1024  # read_file returns at most this much text, with a truncation notice
    list_max_entries: int = 1000
    search_max_results: int = 200  # matching lines shown; all of them are counted
    search_timeout_s: float = 120.0  # one search's limit (the run's own deadline applies too)
    search_engine: str = "auto"  # "auto": ripgrep when it can run the pattern, else Python; "python": Python only


@dataclass(frozen=True)
class ToolContext:
    workspace: Workspace
    limits: ToolLimits = field(default_factory=ToolLimits)
    commands: CommandSetup | None = None  # how run_command runs; None: it is not offered
    deadline: float | None = None  # the run's deadline (time.monotonic()), when a run is under way
    seen: SeenFiles | None = None  # a conversation's files read so far: edits need them read (None: no check)
    loose_edits: bool = True  # edit_file's forgiving matching (cli_agent.tools.loose_match)

    def at(self, deadline: float | None) -> ToolContext:
        """This context bound to a run's deadline."""
        return self if deadline == self.deadline else dataclasses.replace(self, deadline=deadline)

    def deadline_within(self, seconds: float) -> float:
        """The earlier of `seconds` from now and the run's deadline."""
        own = time.monotonic() + seconds
        return own if self.deadline is None else min(own, self.deadline)


@functools.cache
def handlers() -> dict[str, Callable[..., Any]]:
    """Every built-in handler by name (imported on first use, so importing this package stays cheap)."""
    from cli_agent.tools import commands, facts, files, insert

    return {
        "list_files": files.list_files,
        "read_file": files.read_file,
        "search": files.search,
        "create_file": files.create_file,
        "edit_file": files.edit_file,
        "insert_text": insert.insert_text,
        "write_file": files.write_file,
        "delete_file": files.delete_file,
        "rename_file": commands.rename_file,
        "run_command": commands.run_command,
        "propose_fact": facts.propose_fact,
    }

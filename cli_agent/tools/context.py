"""What every tool handler gets besides its arguments: the workspace, the limits, the run's deadline, and the
conversation's state that some tools need (files read so far, how commands run)."""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.fs.workspace import Workspace
    from cli_agent.sandbox import Capability, Policy
    from cli_agent.tools.handlers.seen import SeenFiles
    from cli_agent.tools.web.fetch import WebSetup

__all__ = ["CommandSetup", "ToolContext", "ToolLimits"]


@dataclass(frozen=True)
class CommandSetup:
    """How commands run in this session: `capability` None means unsandboxed (the explicit opt-out)."""

    capability: Capability | None
    policy: Policy
    default_timeout_s: float = 120.0
    max_timeout_s: float = 600.0
    env_allow: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()  # one line each, shown once per session (a refused lock)


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
    loose_edits: bool = True  # edit_file's forgiving matching (cli_agent.tools.handlers.loose_match)
    syntax_check: bool = True  # a change that leaves a Python file unparseable is refused (tools.syntax_guard)
    web: WebSetup | None = None  # how web_fetch reaches the web (None: the defaults, private addresses refused)

    def at(self, deadline: float | None) -> ToolContext:
        """This context bound to a run's deadline."""
        return self if deadline == self.deadline else dataclasses.replace(self, deadline=deadline)

    def deadline_within(self, seconds: float) -> float:
        """The earlier of `seconds` from now and the run's deadline."""
        own = time.monotonic() + seconds
        return own if self.deadline is None else min(own, self.deadline)

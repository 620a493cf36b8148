"""What the composition root hands every command: `AppState` (the injected provider factory, the root's flags),
`flags_given`, `LATEST` (the session `-c/--continue` stands for) and `is_interactive` (whether someone can be
asked). Light on purpose: the REPL reads them before its first prompt, before any of the agent's stack has loaded."""

from __future__ import annotations

import os
import sys
from typing import Any

from cli_agent.contracts.records import dataclass

__all__ = ["LATEST", "AppState", "flags_given", "is_interactive"]

LATEST = "@latest"  # the selector `-c/--continue` stands for


@dataclass
class AppState:
    """What the composition root injects into every command."""

    provider_factory: Any = None  # Callable[[Settings], Provider]; None: the default factory
    flags: dict[str, Any] | None = None  # the root's flags, which subcommand flags override
    output: str | None = None  # the loaded settings' --output, once known


def flags_given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def is_interactive() -> bool:
    """Someone can be asked: stdin and stdout are terminals and CI is not set."""
    return sys.stdin.isatty() and sys.stdout.isatty() and not os.environ.get("CI")

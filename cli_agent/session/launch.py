"""What every front end starts a session from: the settings that the root's flags and a command's own
(`contracts.AppState`) load, and the provider factory. The command line (`cli/`), the ACP server and `mcp serve` all
stand on it, so a session opens the same way whoever asked for it."""

from __future__ import annotations

import sys
from typing import Any

from cli_agent.config import load_settings
from cli_agent.contracts import AppState, escape_for_terminal, flags_given
from cli_agent.session.session import default_provider_factory

__all__ = ["load_for", "provider_factory"]


def load_for(state: AppState, *, announce: bool = True, **sub_flags: Any) -> Any:
    """The settings, from the root's flags overridden by the subcommand's. `announce`: the loader's notes (a
    project config's ignored keys) go to stderr here; the REPL shows them in its banner instead."""
    flags = dict(state.flags or {}) | flags_given(**sub_flags)
    config_file = flags.pop("config", None)
    trust = flags.pop("trust", None)
    loaded = load_settings(flags, config_file=config_file, trust=None if trust is None else bool(trust))
    state.output = loaded.settings.output
    if announce and loaded.notes:
        for note in loaded.notes:
            sys.stderr.write(f"cli-agent: {escape_for_terminal(note)}\n")
    return loaded


def provider_factory(state: AppState) -> Any:
    return state.provider_factory or default_provider


def default_provider(settings: Any) -> Any:
    return default_provider_factory(settings)

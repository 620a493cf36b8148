"""The tools the model is offered: their specs (`specs`, one TOML file each in `cli_agent/tool_specs/`), the registry of
specs and handlers (`registry`), the dispatcher that validates and runs one call and always returns an envelope
(`dispatch`, with `schema_check`), what every handler gets (`context`: the ToolContext, the files seen so far, how
commands run and `command_setup` that makes it from the settings), and the handlers themselves (`handlers/`).

May import: sandbox, facts, providers, config, fs, validated, contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.tools.context import CommandSetup, SeenFiles, ToolContext, command_setup
    from cli_agent.tools.dispatch import Dispatcher, Prepared
    from cli_agent.tools.handlers.edits import replace_text
    from cli_agent.tools.handlers.files import FILE_MAX
    from cli_agent.tools.registry import Registry
    from cli_agent.tools.schema_check import unbounded_keywords
    from cli_agent.tools.specs import ToolSpec, validate_parameters
    from cli_agent.tools.web.fetch import WebSetup, host_of

__all__ = [
    "FILE_MAX",
    "CommandSetup",
    "Dispatcher",
    "Prepared",
    "Registry",
    "SeenFiles",
    "ToolContext",
    "ToolSpec",
    "WebSetup",
    "command_setup",
    "host_of",
    "replace_text",
    "unbounded_keywords",
    "validate_parameters",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("CommandSetup", "SeenFiles", "ToolContext", "command_setup"):
        from cli_agent.tools import context

        return getattr(context, name)
    if name in ("Dispatcher", "Prepared"):
        from cli_agent.tools import dispatch

        return getattr(dispatch, name)
    if name in ("replace_text",):
        from cli_agent.tools.handlers import edits

        return getattr(edits, name)
    if name in ("FILE_MAX",):
        from cli_agent.tools.handlers import files

        return getattr(files, name)
    if name in ("Registry",):
        from cli_agent.tools import registry

        return getattr(registry, name)
    if name in ("unbounded_keywords",):
        from cli_agent.tools import schema_check

        return getattr(schema_check, name)
    if name in ("ToolSpec", "validate_parameters"):
        from cli_agent.tools import specs

        return getattr(specs, name)
    if name in ("WebSetup", "host_of"):
        from cli_agent.tools.web import fetch

        return getattr(fetch, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

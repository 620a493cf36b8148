"""The tools the model is offered: their specs (`specs`, one TOML file each in `cli_agent/tool_specs/`), the registry of
specs and handlers (`registry`), the dispatcher that validates and runs one call and always returns an envelope
(`dispatch`, with `schema_check`), what every handler gets (`context`: the ToolContext, the files seen so far, how
commands run and `command_setup` that makes it from the settings), and the handlers themselves (`handlers/`).

May import: sandbox, facts, providers, config, fs, validated, contracts.
"""

from cli_agent.tools.context import *
from cli_agent.tools.dispatch import *
from cli_agent.tools.handlers.edits import *
from cli_agent.tools.handlers.files import *
from cli_agent.tools.registry import *
from cli_agent.tools.schema_check import *
from cli_agent.tools.specs import *
from cli_agent.tools.web.address import *

__all__ = [
    "FILE_MAX", "CommandSetup", "Dispatcher", "Prepared", "Registry", "SeenFiles", "ToolContext", "ToolLimits",
    "ToolSpec", "WebSetup", "command_setup", "host_of", "replace_text", "unbounded_keywords", "validate_parameters",
]

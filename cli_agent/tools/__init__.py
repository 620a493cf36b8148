"""The tools the model is offered: their specs (`specs`, one TOML file each in `cli_agent/tool_specs/`), the registry of
specs and handlers (`registry`), the dispatcher that validates and runs one call and always returns an envelope
(`dispatch`, with `schema_check`), what every handler gets (`context`: the ToolContext, the files seen so far, how
commands run and `command_setup` that makes it from the settings), and the handlers themselves (`handlers/`).

May import: sandbox, facts, providers, config, fs, validated, contracts.
"""

"""Tool handlers, by the name their spec in tool_specs/ gives.

A handler is `handler(ctx, **arguments)`: its keyword parameters are exactly the properties of the spec's JSON
Schema (required ones without a default), which the spec loader checks at start-up. A read-only handler returns
JSON-able data; a mutating one returns a `Change` and writes nothing (the dispatcher applies it after approval).
Failures the model can act on raise `ToolError`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any


@functools.cache
def handlers() -> dict[str, Callable[..., Any]]:
    """Every built-in handler by name (imported on first use, so importing this package stays cheap)."""
    from cli_agent.tools.handlers import commands, facts, files, insert, line_edits, run_tools
    from cli_agent.tools.web import page

    return {
        "list_files": files.list_files,
        "read_file": files.read_file,
        "search": files.search,
        "create_file": files.create_file,
        "edit_file": files.edit_file,
        "insert_text": insert.insert_text,
        "replace_lines": line_edits.replace_lines,
        "replace_definition": line_edits.replace_definition,
        "write_file": files.write_file,
        "delete_file": files.delete_file,
        "rename_file": files.rename_file,
        "run_command": commands.run_command,
        "propose_fact": facts.propose_fact,
        "web_fetch": page.web_fetch,
        "update_plan": run_tools.update_plan,
        "task": run_tools.task,
    }

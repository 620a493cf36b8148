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

from cli_agent.tools.handlers import commands, facts, files, insert, line_edits, run_tools, search
from cli_agent.tools.web import page

_MODULES = (files, search, insert, line_edits, commands, facts, run_tools, page)  # where the handlers are written


@functools.cache
def handlers() -> dict[str, Callable[..., Any]]:
    """Every built-in handler by name: a handler is the public function of a handler module that bears its tool's
    name (a spec with no such function fails at load, naming the tool), so a new tool's handler needs no table."""
    return {name: value for module in _MODULES for name, value in vars(module).items()
            if not name.startswith("_") and callable(value) and getattr(value, "__module__", None) == module.__name__}

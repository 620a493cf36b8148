"""Workflows: named tasks the user invokes (`/explain src/app.py`), defined in TOML files (`files`: the built-in
ones in `cli_agent/builtin_workflows/`, the user's and the project's), and run as steps in one session (`run`).

May import: session and everything below it.
"""

from cli_agent.workflows.files import *
from cli_agent.workflows.run import *

__all__ = [
    "Catalog", "Param", "Workflow", "ask_missing", "complete_arguments", "load_workflows", "missing_message",
    "parse_arguments", "parse_tokens", "render_catalog", "run_workflow",
]

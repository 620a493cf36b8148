"""Workflows: named tasks the user invokes (`/explain src/app.py`), defined in TOML files (`files`: the built-in
ones in `cli_agent/builtin_workflows/`, the user's and the project's), and run as steps in one session (`run`).

May import: session and everything below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.workflows.files import Catalog, Param, Workflow, load_workflows
    from cli_agent.workflows.run import (
        ask_missing,
        complete_arguments,
        missing_message,
        parse_arguments,
        parse_tokens,
        render_catalog,
        run_workflow,
    )

__all__ = [
    "Catalog",
    "Param",
    "Workflow",
    "ask_missing",
    "complete_arguments",
    "load_workflows",
    "missing_message",
    "parse_arguments",
    "parse_tokens",
    "render_catalog",
    "run_workflow",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("Catalog", "Param", "Workflow", "load_workflows"):
        from cli_agent.workflows import files

        return getattr(files, name)
    if name in (
        "ask_missing",
        "complete_arguments",
        "missing_message",
        "parse_arguments",
        "parse_tokens",
        "render_catalog",
        "run_workflow",
    ):
        from cli_agent.workflows import run

        return getattr(run, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

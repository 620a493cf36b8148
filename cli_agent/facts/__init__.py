"""Project facts and locks: the fact store (`store`: `.cli-agent/facts.toml` and its draft) and its TOML files (`file`).

May import: config, fs, validated, contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.facts.store import FactStore, list_json, render_list, workspace_for

__all__ = [
    "FactStore",
    "list_json",
    "render_list",
    "workspace_for",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("FactStore", "list_json", "render_list", "workspace_for"):
        from cli_agent.facts import store

        return getattr(store, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Project facts and locks: the fact store (`store`: `.cli-agent/facts.toml` and its draft) and its TOML files (`file`).

May import: config, fs, validated, contracts.
"""

from cli_agent.facts.store import *

__all__ = ["FactStore", "list_json", "render_list", "workspace_for"]

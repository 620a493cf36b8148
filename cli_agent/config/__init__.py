"""Settings: the dataclasses (`settings`), the layered loader (`loading`: flags > env > --config > project > user >
defaults), `config show` and `config paths` (`show`), what an untrusted project config may set (`trust`), the
folders the user trusts (`trusted_folders`), and the `[mcp_servers.NAME]` tables (`mcp_settings`).

May import: fs, validated, contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.config import trusted_folders
    from cli_agent.config.hook_settings import Hook
    from cli_agent.config.loading import Loaded, load_settings
    from cli_agent.config.mcp_settings import McpServer, server_of
    from cli_agent.config.settings import LocalSettings, Settings, mask_secret
    from cli_agent.config.show import render_paths, render_show
    from cli_agent.config.trusted_folders import TrustEntry, earlier_entry, folder_trusted, trust_folder

__all__ = [
    "Hook",
    "Loaded",
    "LocalSettings",
    "McpServer",
    "Settings",
    "TrustEntry",
    "earlier_entry",
    "folder_trusted",
    "load_settings",
    "mask_secret",
    "render_paths",
    "render_show",
    "server_of",
    "trust_folder",
    "trusted_folders",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("Hook",):
        from cli_agent.config import hook_settings

        return getattr(hook_settings, name)
    if name in ("Loaded", "load_settings"):
        from cli_agent.config import loading

        return getattr(loading, name)
    if name in ("McpServer", "server_of"):
        from cli_agent.config import mcp_settings

        return getattr(mcp_settings, name)
    if name in ("LocalSettings", "Settings", "mask_secret"):
        from cli_agent.config import settings

        return getattr(settings, name)
    if name in ("render_paths", "render_show"):
        from cli_agent.config import show

        return getattr(show, name)
    if name in ("TrustEntry", "earlier_entry", "folder_trusted", "trust_folder"):
        from cli_agent.config import trusted_folders

        return getattr(trusted_folders, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

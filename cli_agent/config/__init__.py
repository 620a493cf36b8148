"""Settings: the dataclasses (`settings`), the layered loader (`loading`: flags > env > --config > project > user >
defaults), `config show` and `config paths` (`show`), what an untrusted project config may set (`trust`), the
folders the user trusts (`trusted_folders`), and the `[mcp_servers.NAME]` tables (`mcp_settings`).

May import: fs, validated, contracts.
"""

from __future__ import annotations

from cli_agent.config import trusted_folders
from cli_agent.config.hook_settings import *
from cli_agent.config.loading import *
from cli_agent.config.mcp_settings import *
from cli_agent.config.settings import *
from cli_agent.config.show import *
from cli_agent.config.trusted_folders import *

__all__ = [
    "Hook", "Loaded", "LocalSettings", "McpServer", "NetworkRules", "Settings", "TrustEntry", "earlier_entry", "folder_trusted",
    "load_settings", "mask_secret", "render_paths", "render_show", "server_of", "trust_folder", "trusted_folders",
]

"""Settings: the dataclasses (`settings`), the layered loader (`loading`: flags > env > --config > project > user >
defaults), `config show` and `config paths` (`show`), what an untrusted project config may set (`trust`), the
folders the user trusts (`trusted_folders`), the `[mcp_servers.NAME]` tables (`mcp_settings`), and the
`[[permissions]]` rules (`permissions`: matching a call; `permission_files`: where they are kept, "always").

May import: fs, validated, contracts.
"""

from cli_agent.config import trusted_folders
from cli_agent.config.hook_settings import *
from cli_agent.config.loading import *
from cli_agent.config.mcp_settings import *
from cli_agent.config.permission_files import *
from cli_agent.config.permission_show import *
from cli_agent.config.permissions import *
from cli_agent.config.settings import *
from cli_agent.config.show import *
from cli_agent.config.trusted_folders import *

__all__ = [
    "Hook", "Loaded", "LocalSettings", "McpServer", "NetworkRules", "PermissionRule", "Settings", "Subject",
    "TrustEntry", "append_rule", "command_words", "decide", "earlier_entry", "example_problem", "explain_call",
    "folder_trusted", "keep_rule", "load_settings", "mask_secret", "own_rules_file", "render_paths", "render_rules",
    "render_show", "rule_toml", "server_of", "subject_for", "suggested_rule", "trust_folder", "trusted_folders",
    "withheld_lines",
]

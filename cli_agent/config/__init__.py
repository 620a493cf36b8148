"""Settings: the dataclasses (`settings`), the layered loader (`loading`: flags > env > --config > project > user >
defaults), `config show` and `config paths` (`show`), what an untrusted project config may set (`trust`), the
folders the user trusts (`trusted_folders`), and the `[mcp_servers.NAME]` tables (`mcp_settings`).

May import: fs, validated, contracts.
"""

"""Model Context Protocol, the client side: tools from the user's MCP servers in the session's registry.

    hub.py         the client: one event-loop thread owning every server connection (the official `mcp` SDK)
    tools.py       an MCP tool as a ToolSpec of the registry, an MCP result as an envelope
    attach.py      a session's registry grown by the servers' tools once they are discovered
    connect.py     one server's transport (stdio or HTTP), and which errors are the network's
    server_log.py  a server's stderr, kept to a bounded log

Importing this package (or `cli_agent.config.mcp_settings`) imports nothing of the `mcp` SDK: only a session with a
server configured does, in the hub's thread.

May import: history, agent and everything below them (the server side, `mcp serve`, is in serve/; a trace's
MCP results played back in a replay, in replay/).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.mcp.attach import McpAttachment, log_dir
    from cli_agent.mcp.hub import McpHub, ServerState, ServerStatus
    from cli_agent.mcp.tools import category_for, split_name

__all__ = [
    "McpAttachment",
    "McpHub",
    "ServerState",
    "ServerStatus",
    "category_for",
    "log_dir",
    "split_name",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("McpAttachment", "log_dir"):
        from cli_agent.mcp import attach

        return getattr(attach, name)
    if name in ("McpHub", "ServerState", "ServerStatus"):
        from cli_agent.mcp import hub

        return getattr(hub, name)
    if name in ("category_for", "split_name"):
        from cli_agent.mcp import tools

        return getattr(tools, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

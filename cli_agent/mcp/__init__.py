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

from cli_agent.mcp.attach import *
from cli_agent.mcp.hub import *
from cli_agent.mcp.tools import *

__all__ = ["McpAttachment", "McpHub", "ServerState", "ServerStatus", "category_for", "log_dir", "split_name"]

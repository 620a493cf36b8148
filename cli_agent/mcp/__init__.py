"""Model Context Protocol: tools from the user's MCP servers, and cli-agent's own file tools offered as one.

    hub.py         the client: one event-loop thread owning every server connection (the official `mcp` SDK)
    tools.py       an MCP tool as a ToolSpec of the registry, an MCP result as an envelope
    attach.py      a session's registry grown by the servers' tools once they are discovered
    serve.py       `cli-agent mcp serve`: the sandboxed file tools over stdio

Importing this package (or `cli_agent.config.mcp_settings`) imports nothing of the `mcp` SDK: only a session with a
server configured does, in the hub's thread.
"""

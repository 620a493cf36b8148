"""`cli-agent mcp list [--json]`, `cli-agent mcp test NAME` and `/mcp` in the REPL: the configured MCP servers,
their state and their tools.

`mcp list` starts every enabled server, waits for each to be ready or to fail, and shows them; `mcp test NAME`
starts that one (even if disabled) and exits 1 with the reason when it does not start. `/mcp` shows the session's
own servers as they are now, without waiting.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.commands.commands import Command

if TYPE_CHECKING:
    from cli_agent.config import Loaded
    from cli_agent.mcp import ServerStatus
    from cli_agent.ui.repl.commands.commands import CommandContext, CommandRegistry

__all__ = ["list_servers", "test_server"]


def _discover(servers: dict[str, Any]) -> list[ServerStatus]:
    from cli_agent.mcp import McpHub, log_dir  # deferred: the MCP client (asyncio, the SDK), only with servers

    hub = McpHub(servers, log_dir=log_dir())
    try:
        hub.start()
        hub.wait(hub.start_limit())
        return hub.statuses()
    finally:
        hub.close()


def list_servers(loaded: Loaded, *, as_json: bool) -> int:
    for note in loaded.notes:
        sys.stderr.write(f"cli-agent: {esc(note)}\n")
    servers = loaded.settings.mcp_servers
    statuses = _discover(servers) if any(s.enabled for s in servers.values()) else _not_started(servers)
    if as_json:
        sys.stdout.write(json.dumps([status_json(s) for s in statuses], indent=2, ensure_ascii=False) + "\n")
    elif not statuses:
        sys.stdout.write("no MCP servers configured: add a [mcp_servers.NAME] table to your config "
                         "(see docs/mcp.md)\n")
    else:
        sys.stdout.write(render_statuses(statuses) + "\n")
    return 0


def test_server(loaded: Loaded, name: str) -> int:
    servers = loaded.settings.mcp_servers
    if name not in servers:
        known = ", ".join(servers) or "none configured"
        raise errors.UsageError(f"no MCP server named {name!r} (servers: {known})")
    [status] = _discover({name: dataclasses.replace(servers[name], enabled=True)})
    sys.stdout.write(render_statuses([status]) + "\n")
    if status.state != "ready":
        raise errors.CliAgentError(f"mcp server {name!r} did not start: {status.error}")
    return 0


def _not_started(servers: dict[str, Any]) -> list[ServerStatus]:
    # deferred: the MCP client (asyncio, the SDK), only with servers
    from cli_agent.mcp import ServerState, ServerStatus

    return [ServerStatus(name, server, ServerState.DISABLED) for name, server in servers.items()]


def status_json(status: ServerStatus) -> dict[str, Any]:
    server = status.server
    return {"name": status.name, "transport": server.transport, "command": server.command, "args": server.args,
            "url": server.url, "enabled": server.enabled, "origin": server.origin, "state": str(status.state),
            "error": status.error or None, "server_info": status.server_info or None, "restarts": status.restarts,
            "refused": list(status.notes), "tools": [_tool_json(status.name, server, tool) for tool in status.tools]}


def _tool_json(name: str, server: Any, tool: Any) -> dict[str, Any]:
    annotations = tool.annotations
    return {"name": f"{name}__{tool.name}", "description": tool.description or "",
            "read_only": bool(annotations and annotations.read_only_hint),
            "approval": server.approval_for(tool.name)}


def render_statuses(statuses: list[ServerStatus]) -> str:
    lines = []
    for status in statuses:
        server = status.server
        head = f"{status.name}  [{status.state}]  {server.transport}: {server.where()}"
        if status.server_info:
            head += f"  ({status.server_info})"
        lines.append(esc(head))
        lines.append(esc(f"  from {server.origin}; timeout {server.timeout_s:g} s"
                         + (f"; allowlist: {', '.join(server.tools)}" if server.tools is not None else "")))
        if status.error:
            lines.append(esc(f"  error: {status.error}"))
        lines += [esc(f"  {note}") for note in status.notes]
        for tool in status.tools:
            info = _tool_json(status.name, server, tool)
            flags = ["read-only (server's hint)" if info["read_only"] else "",
                     "runs without asking" if info["approval"] == "never" else "asks"]
            summary = " ".join((tool.description or "").split())[:80]
            lines.append(esc(f"  - {info['name']}: {summary}  [{', '.join(f for f in flags if f)}]"))
    return "\n".join(lines)


# -- /mcp in the REPL ---------------------------------------------------------------------------------------------

def register_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    registry.register(Command("mcp", "the MCP servers of this session: state and tools", _repl_mcp,
                              help="/mcp shows each configured MCP server (from [mcp_servers] in your config), "
                                   "whether it is starting, ready or failed and why, and the tools it gives the "
                                   "model as SERVER__tool. `cli-agent mcp list` does the same outside the REPL."))


def _repl_mcp(ctx: CommandContext, args: str) -> None:
    attached = ctx.session.mcp
    if attached is None:
        ctx.console.print("no MCP servers configured: add a [mcp_servers.NAME] table to your config "
                          "(see docs/mcp.md)", markup=False, highlight=False)
        return
    ctx.console.print(render_statuses(attached.hub.statuses()), markup=False, highlight=False)

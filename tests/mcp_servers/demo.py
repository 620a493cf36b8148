"""A FastMCP-style server (the SDK's MCPServer) for the tests: `python demo.py` (stdio) or `python demo.py http PORT`.
`MARKER_DIR` in the environment: where the `sleep` tool notes that it was cancelled."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

server = MCPServer("demo")


@server.tool(annotations=ToolAnnotations(read_only_hint=True))
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@server.tool()
def shout(text: str) -> str:
    """Upper-case a text."""
    return text.upper()


@server.tool()
def big(size: int) -> str:
    """A text of `size` characters."""
    return "x" * size


@server.tool()
async def sleep(seconds: float) -> str:
    """Sleep, then say so."""
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        Path(os.environ.get("MARKER_DIR", "."), "cancelled").write_text("cancelled")
        raise
    return "slept"


@server.tool()
def die() -> str:
    """Exit the server process in the middle of the call."""
    os._exit(3)


@server.tool()
def fail() -> str:
    """Always fails."""
    raise ToolError("it broke")


@server.tool()
def read_file(path: str) -> str:
    """A tool with a built-in tool's name."""
    return f"demo read {path}"


def grown() -> str:
    """A tool added while the server runs."""
    return "grown!"


@server.tool()
async def grow(ctx: Context) -> str:
    """Add the tool `grown` and tell the client that the tool list changed."""
    server.add_tool(grown)
    await ctx.session.send_tool_list_changed()
    return "grew"


if __name__ == "__main__":
    if sys.argv[1:2] == ["http"]:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()

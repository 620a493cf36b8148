"""What a client sends, in cli-agent's terms: a prompt's content as the task's text, and the MCP servers of
`session/new` as `[mcp_servers]` entries."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlparse

from acp import RequestError, schema

from cli_agent.config import server_of
from cli_agent.serve.acp.updates import fenced


def _workspace_path(uri: str, root: Path) -> str | None:
    """A `file://` URI inside the workspace as its workspace-relative path; None for anything else."""
    parsed = urlparse(uri)
    if parsed.scheme not in ("file", ""):
        return None
    path = Path(unquote(parsed.path))
    if not path.is_absolute():
        return path.as_posix()
    try:
        return path.resolve().relative_to(root).as_posix()
    except (ValueError, OSError):
        return None


def prompt_text(blocks: list[Any], root: Path) -> str:
    """A prompt's content as the task's text: a resource link inside the workspace becomes an `@path` mention (the
    task's files are shown to the model), an embedded text resource is attached whole; images, audio and binary
    resources are not taken (the capabilities say so)."""
    parts: list[str] = []
    attached: list[str] = []
    for block in blocks:
        if isinstance(block, schema.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, schema.ResourceContentBlock):
            path = _workspace_path(block.uri, root)
            mention = path is not None and not any(c.isspace() for c in path)  # `@a b.py` would name `a`
            parts.append(f" @{path} " if mention else f" {path or block.uri} ")
        elif isinstance(block, schema.EmbeddedResourceContentBlock) \
                and isinstance(block.resource, schema.TextResourceContents):
            name = _workspace_path(block.resource.uri, root) or block.resource.uri
            attached.append(f"{name}:\n{fenced(block.resource.text)}")
        else:
            raise RequestError(-32602, f"{block.type} content is not supported: send text, "
                               "resource links or text resources")
    text = "".join(parts).strip()
    if attached:
        text += "\n\nAttached by the user:\n\n" + "\n\n".join(attached)
    if not text.strip():
        raise RequestError(-32602, "the prompt is empty")
    return text


_NAME = re.compile(r"[^A-Za-z0-9_-]+")


def client_servers(servers: list[Any] | None) -> dict[str, Any]:
    """The client's MCP servers as `[mcp_servers]` entries, under the same approval rules as the config's (every
    tool asks). A stdio server is a command, an HTTP one a streamable HTTP URL; SSE servers are not taken (the
    capabilities say so)."""
    out: dict[str, Any] = {}
    for server in servers or []:
        name = _NAME.sub("-", server.name).strip("-")[:32] or "client"
        if isinstance(server, schema.McpServerStdio):
            table = {"command": server.command, "args": list(server.args), "env": {v.name: v.value for v in server.env}}
        elif isinstance(server, schema.HttpMcpServer):
            table = {"url": server.url, "headers": {h.name: h.value for h in server.headers}}
        else:
            raise RequestError(-32602, f"MCP server {server.name!r}: only stdio and http servers are supported")
        try:
            out[name] = server_of(table, "the client (session/new)")
        except ValueError as exc:
            raise RequestError(-32602, f"MCP server {server.name!r}: {exc}") from None
    return out

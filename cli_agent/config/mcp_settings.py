"""The `[mcp_servers.NAME]` config table, and which config file may set what.

    [mcp_servers.git]                     # a stdio server: a command cli-agent starts
    command = "mcp-server-git"
    args = ["--repository", "."]
    env = { GIT_PAGER = "cat" }
    tools = ["git_status", "git_log"]     # an allowlist (default: every tool the server lists)
    approval = { git_status = "never" }   # per tool; or approval = "never" for the whole server

    [mcp_servers.docs]                    # a streamable HTTP server
    url = "http://127.0.0.1:8765/mcp"
    headers = { Authorization = "Bearer ..." }
    timeout_s = 30

Servers from several config files are merged by name; a later file's server replaces an earlier one of the same
name whole. A server is a command that runs, so a project's config declares one only in a trusted folder; and
`approval` (what may run without asking) counts only in the user's own config: anywhere else it is reset to
"ask", and `merge_servers` says so in a note.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator, model_validator

__all__ = ["ApprovalSetting", "McpServer", "merge_servers", "parse_servers"]

ApprovalSetting = Literal["ask", "never"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


class McpServer(BaseModel):
    """One server: `command` (stdio) or `url` (streamable HTTP), never both."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: str | None = Field(default=None, min_length=1)
    args: list[str] = Field(default_factory=list)
    env: dict[str, str] = Field(default_factory=dict)
    cwd: str | None = None
    url: str | None = Field(default=None, min_length=1)
    headers: dict[str, str] = Field(default_factory=dict)
    enabled: bool = True
    timeout_s: float = Field(default=60.0, gt=0, le=3600)
    tools: list[str] | None = None
    approval: ApprovalSetting | dict[str, ApprovalSetting] = "ask"
    _origin: str = PrivateAttr(default="user config")  # which config file declared it

    @field_validator("approval", mode="before")
    @classmethod
    def _approval(cls, value: Any) -> Any:
        values = value.values() if isinstance(value, dict) else [value]
        if any(v not in ("ask", "never") for v in values):
            raise ValueError(f'approval must be "ask" or "never", or a table of tool = "ask" | "never"; got {value!r}'
                             [:200])
        return value

    @model_validator(mode="after")
    def _one_transport(self) -> McpServer:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (a streamable HTTP server), not "
                             + ("both" if self.command else "neither"))
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError(f"url must start with http:// or https://, got {self.url[:60]!r}")
        if self.command is None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a stdio server (with command), not a url")
        if self.url is None and self.headers:
            raise ValueError("headers are for a streamable HTTP server (with url), not a command")
        return self

    @property
    def origin(self) -> str:
        return self._origin

    @property
    def transport(self) -> str:
        return "stdio" if self.command is not None else "http"

    def approval_for(self, tool: str) -> ApprovalSetting:
        """"never" (runs without asking) or "ask" for one of the server's tools (its own name, unprefixed)."""
        if isinstance(self.approval, str):
            return self.approval
        return self.approval.get(tool, self.approval.get("*", "ask"))

    def allows(self, tool: str) -> bool:
        return self.tools is None or tool in self.tools

    def where(self) -> str:
        """What it runs or reaches, for listings: the command line or the url."""
        if self.command is not None:
            return " ".join([self.command, *self.args])
        return self.url or ""


def parse_servers(servers: dict[str, Any]) -> dict[str, McpServer]:
    """Each `[mcp_servers.NAME]` table as an McpServer (strictly, as TOML gives it); a ValueError that names the
    key (`mcp_servers.NAME.KEY: ...`) for the first problem."""
    parsed: dict[str, McpServer] = {}
    for name, table in servers.items():
        if not _NAME.match(name) or "__" in name:
            raise ValueError(f"mcp_servers.{name[:40]}: a server name must be 1-32 letters, digits, '-' or '_' "
                             "(not '__'), starting with a letter or digit")
        if isinstance(table, McpServer):
            parsed[name] = table
            continue
        if not isinstance(table, dict):
            raise ValueError(f"mcp_servers.{name}: expected a table, found {type(table).__name__}")
        try:
            parsed[name] = McpServer.model_validate(table, strict=True)
        except ValidationError as exc:
            raise ValueError(_problem(f"mcp_servers.{name}", exc)) from None
    return parsed


def _problem(prefix: str, exc: ValidationError) -> str:
    err = exc.errors()[0]
    where = ".".join([prefix, *(str(p) for p in err["loc"] if not str(p).startswith(("literal[", "dict[")))])
    if err["type"] == "extra_forbidden":
        return f"unknown key '{where}' (expected one of: {', '.join(McpServer.model_fields)})"
    if err["type"] == "value_error":
        return f"{where}: {err['ctx']['error']}"
    message = str(err["msg"]).replace("Input should be a valid", "expected a").replace("Input should be", "expected")
    if err["type"] == "missing":
        return f"{where}: {message}"
    return f"{where}: {message}, found {err['input']!r}"[:300]


def merge_servers(layers: Iterable[tuple[str, Any]], *, project_trusted: bool) -> tuple[dict[str, McpServer],
                                                                                         list[str]]:
    """The servers of every config layer (`(label, servers)` in precedence order, lowest first; `label` starts
    with "user config", "project config" or "--config"), with the notes to show the user.

    A project config's servers count only when `project_trusted`; `approval` counts only from the user config."""
    merged: dict[str, McpServer] = {}
    notes: list[str] = []
    for label, servers in layers:
        if not servers:
            continue
        if label.startswith("project config") and not project_trusted:
            notes.append(f"ignored mcp_servers ({', '.join(servers)}) from the untrusted {label}: a server is a "
                         "command that runs (run `cli-agent trust` in this folder, or pass --trust, to use them)")
            continue
        for name, server in servers.items():
            if not label.startswith("user config") and server.approval != "ask":
                notes.append(f"mcp server {name!r}: approval from the {label} is ignored (only your user config "
                             "sets it); its tools ask before each call")
                server = server.model_copy(update={"approval": "ask"})
            server._origin = label
            merged[name] = server
    return merged, notes

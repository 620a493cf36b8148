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

import dataclasses
import re
from collections.abc import Iterable
from dataclasses import field
from typing import Any, Literal

from cli_agent.contracts import dataclass
from cli_agent.validated import check, problem_of, rule, unchecked

__all__ = ["McpServer", "server_of"]

ApprovalSetting = Literal["ask", "never"]
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$")


def _approval(value: Any) -> Any:
    values = value.values() if isinstance(value, dict) else [value]
    if any(v not in ("ask", "never") for v in values):
        raise ValueError(f'approval must be "ask" or "never", or a table of tool = "ask" | "never"; got {value!r}'
                         [:200])
    return value


@dataclass(frozen=True, kw_only=True)
class McpServer:
    """One server: `command` (stdio) or `url` (streamable HTTP), never both. Checked by `checked`, strictly (as TOML
    gives it) from a config file; constructing one directly checks nothing (`server_of` does)."""

    command: str | None = rule(None, min_length=1)
    args: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = rule(None, min_length=1)
    headers: dict[str, str] = field(default_factory=dict)
    enabled: bool = True
    timeout_s: float = rule(60.0, gt=0, le=3600)
    tools: list[str] | None = None
    approval: ApprovalSetting | dict[str, ApprovalSetting] = rule("ask", before=_approval)
    origin: str = unchecked("user config")  # which config file declared it

    def check_whole(self) -> None:
        if (self.command is None) == (self.url is None):
            raise ValueError("give either command (a stdio server) or url (a streamable HTTP server), not "
                             + ("both" if self.command else "neither"))
        if self.url is not None and not re.match(r"^https?://", self.url):
            raise ValueError(f"url must start with http:// or https://, got {self.url[:60]!r}")
        if self.command is None and (self.args or self.env or self.cwd):
            raise ValueError("args, env and cwd are for a stdio server (with command), not a url")
        if self.url is None and self.headers:
            raise ValueError("headers are for a streamable HTTP server (with url), not a command")

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


def check_names(servers: Any) -> Any:
    """The `[mcp_servers]` table, its server names checked (they prefix tool names); a ValueError for a bad one."""
    for name in servers if isinstance(servers, dict) else ():
        if not _NAME.match(name) or "__" in name:
            raise ValueError(f"{name[:40]!r} is not a server name: 1-32 letters, digits, '-' or '_' (not '__'), "
                             "starting with a letter or digit")
    return servers


def server_of(table: dict[str, Any], origin: str) -> McpServer:
    """A server described by someone other than a config file (an editor's session); a one-line ValueError
    (`url: ...`) if it is wrong."""
    from pydantic import ValidationError  # deferred: pydantic (40 ms), only when a config file is checked

    try:
        return dataclasses.replace(check(McpServer, table, strict=True), origin=origin)
    except ValidationError as exc:
        raise ValueError(str(problem_of(exc, McpServer, table))) from None


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
                server = dataclasses.replace(server, approval="ask")
            merged[name] = dataclasses.replace(server, origin=label)
    return merged, notes

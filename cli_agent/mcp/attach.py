"""A session's MCP servers: started in the background when the session opens, their tools joined to the registry
before a run once discovery has settled.

    attached = McpAttachment(settings.mcp_servers, Registry.builtin())
    attached.start()                              # at once: the prompt is never held up
    registry, notes = attached.registry(wait=30)  # the built-ins plus every ready server's tools
    attached.failures()                           # or before: the servers that failed (each said once)

Calls go through `McpToolHandler`, a handler like any other: the dispatcher validates the arguments against the
tool's schema, the approval policy decides, then the handler calls the server and turns the result (or the
failure, naming the server) into an envelope.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from cli_agent.config import McpServer
from cli_agent.contracts import Envelope
from cli_agent.fs import paths
from cli_agent.mcp.hub import McpCallError, McpHub, ServerState
from cli_agent.mcp.tools import MANY_TOOLS_CHARS, envelope_for, specs_for_servers, split_name
from cli_agent.tools import Registry

__all__ = ["McpAttachment", "log_dir"]


def log_dir() -> Path:
    return paths.user_state_dir() / "mcp"


def _failed(status: Any) -> str:
    return f"mcp server {status.name!r} is not available: {status.error}"


class McpToolHandler:
    """`handler(ctx, **arguments)` for one MCP tool: the call, its result as an envelope."""

    def __init__(self, hub: McpHub, server: str, tool: str) -> None:
        self.hub, self.server, self.tool = hub, server, tool
        self.__name__ = self.__qualname__ = f"{server}__{tool}"

    def __call__(self, ctx: Any, **arguments: Any) -> Envelope:
        try:
            result = self.hub.call(self.server, self.tool, arguments, deadline=getattr(ctx, "deadline", None))
        except McpCallError as exc:
            return Envelope.failure(str(exc), data={"server": self.server})
        return envelope_for(self.server, self.tool, result)


class McpAttachment:
    def __init__(self, servers: Mapping[str, McpServer], base: Registry, *, logs: Path | None = None) -> None:
        self.servers = dict(servers)
        self.base = base
        self.hub = McpHub(self.servers, log_dir=logs or log_dir())
        self._registry = base
        self._key: tuple[Any, ...] = ()
        self._reported: set[str] = set()
        self._reporting = threading.Lock()  # the REPL's watcher takes failures from another thread

    def start(self) -> None:
        self.hub.start()

    def registry(self, wait: float | None) -> tuple[Registry, list[str]]:
        """The registry with the tools of every ready server (waiting up to `wait` s for the others to settle),
        and the notes not reported before: servers that failed, tools skipped."""
        self.hub.wait(wait)
        statuses = self.hub.statuses()
        key = tuple((s.name, s.state, s.restarts, tuple(t.name for t in s.tools)) for s in statuses)
        notes: list[str] = []
        for status in statuses:
            if status.state is ServerState.FAILED:
                notes.append(_failed(status))
            elif status.state is ServerState.STARTING:
                notes.append(f"mcp server {status.name!r} is still starting; its tools come in a later turn")
            notes += status.notes
        if key != self._key:
            self._key = key
            self._registry, tool_notes = self._build([s for s in statuses if s.state is ServerState.READY])
            notes += tool_notes
        return self._registry, self._fresh(notes)

    def _fresh(self, notes: list[str]) -> list[str]:
        with self._reporting:
            fresh = [n for n in notes if n not in self._reported]
            self._reported.update(fresh)
            return fresh

    def failures(self) -> list[str]:
        """Without waiting: a note for each server that failed to start and was not reported yet (a note is given
        once, here or by `registry`), for a front end to say before the next run."""
        return self._fresh([_failed(s) for s in self.hub.statuses() if s.state is ServerState.FAILED])

    def unreported(self) -> bool:
        """Whether a server failed whose note was not given yet."""
        return any(s.state is ServerState.FAILED and _failed(s) not in self._reported for s in self.hub.statuses())

    def starting(self) -> bool:
        """Whether a server is still connecting."""
        return any(s.state is ServerState.STARTING for s in self.hub.statuses())

    def _build(self, ready: list[Any]) -> tuple[Registry, list[str]]:
        specs, notes = specs_for_servers([(s.name, s.server, s.tools) for s in ready], self.base.names())
        handlers: dict[str, Any] = {name: self.base.handler(name) for name in self.base.names()
                                    if self.base.has_handler(name)}
        for spec in specs:
            parts = split_name(spec.name)
            assert parts is not None
            handlers[spec.name] = McpToolHandler(self.hub, *parts)
        return Registry([*self.base.specs(), *specs], handlers, optional_budget=MANY_TOOLS_CHARS), notes

    def close(self) -> None:
        self.hub.close()

"""The MCP client: one background thread runs an asyncio loop that owns every server connection.

    hub = McpHub(settings.mcp_servers, log_dir=paths.user_state_dir() / "mcp")
    hub.start()                      # returns at once; servers connect in the background
    hub.wait(10)                     # until each server is ready or failed (or the time is up)
    hub.statuses()                   # name, state, tools, error of each server
    hub.call("git", "git_status", {"repo_path": "."})   # a CallToolResult, or McpCallError naming the server
    hub.close()

Each server is one task in the loop: it opens the transport (stdio or streamable HTTP) with the official `mcp` SDK,
does the initialize handshake, lists the tools and then holds the connection until the hub closes or the server is
restarted. A call that outlives its timeout is cancelled by the SDK (`notifications/cancelled`); a server that dies
or stops answering is restarted once, and after a second failure it stays down. A server's stderr and the SDK's own
log go to files in `log_dir`, never to the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import math
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from cli_agent.config import McpServer
from cli_agent.contracts import CliAgentError, dataclass
from cli_agent.mcp.connect import hold_connection, one_line
from cli_agent.mcp.tools import plain_tools

__all__ = ["McpHub", "ServerState", "ServerStatus"]

PING_S = 3.0  # after a timed-out call: a server that does not answer a ping within this is hung
MAX_RESTARTS = 1
DEADLINE_GRACE_S = 2.0  # past the run's deadline, the SDK's cancellation of a cut-off call may take this long
MIN_START_S = 30.0  # a server may take this long to start even with a shorter timeout_s (a first npx run...)


def start_limit(server: McpServer) -> float:
    return max(server.timeout_s, MIN_START_S)


class McpCallError(CliAgentError):
    """A call that got no result: the message names the server and says what happened."""


class ServerState(enum.StrEnum):
    STARTING = "starting"
    READY = "ready"
    FAILED = "failed"
    DISABLED = "disabled"


@dataclass(frozen=True)
class ServerStatus:
    name: str
    server: McpServer
    state: ServerState
    tools: tuple[Any, ...] = ()  # mcp.types.Tool, as the server listed them (after the allowlist)
    error: str = ""
    restarts: int = 0
    server_info: str = ""  # "name version" as the server gave it
    notes: tuple[str, ...] = ()  # tools refused for their names (cli_agent.mcp.tools.plain_tools)


@dataclass
class _Connection:
    status: ServerStatus
    client: Any = None
    stop: asyncio.Event | None = None
    task: asyncio.Task[None] | None = None
    settled: threading.Event = field(default_factory=threading.Event)


class McpHub:
    def __init__(self, servers: Mapping[str, McpServer], *, log_dir: Path) -> None:
        self.log_dir = log_dir
        self._conns = {name: _Connection(ServerStatus(name, server, ServerState.STARTING if server.enabled
                                                      else ServerState.DISABLED))
                       for name, server in servers.items()}
        for conn in self._conns.values():
            if conn.status.state is ServerState.DISABLED:
                conn.settled.set()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    # -- the thread and its loop ------------------------------------------------------------------------------

    def start(self, names: list[str] | None = None) -> None:
        """Start the loop thread (once) and connect the enabled servers (or only `names`) in the background."""
        with self._lock:
            if self._loop is None:
                self._loop = asyncio.new_event_loop()
                ready = threading.Event()
                self._thread = threading.Thread(target=self._run_loop, args=(ready,), name="mcp-hub", daemon=True)
                self._thread.start()
                ready.wait()
        for name, conn in self._conns.items():
            if (names is None or name in names) and conn.status.state is ServerState.STARTING and conn.task is None:
                self._submit(self._open(name))

    def _run_loop(self, ready: threading.Event) -> None:
        assert self._loop is not None
        asyncio.set_event_loop(self._loop)
        self._loop.call_soon(ready.set)
        try:
            self._loop.run_forever()
        finally:
            with contextlib.suppress(Exception):
                self._loop.run_until_complete(self._loop.shutdown_asyncgens())
            self._loop.close()

    def _submit(self, coro: Any) -> Future[Any]:
        assert self._loop is not None
        return asyncio.run_coroutine_threadsafe(coro, self._loop)

    def start_limit(self) -> float:
        """How long the slowest server may take to start (plus a second of slack)."""
        return max((start_limit(c.status.server) for c in self._conns.values()), default=0.0) + 1.0

    def wait(self, timeout: float | None = None) -> None:
        """Until every server is ready, failed or disabled, or `timeout` seconds have passed."""
        deadline = None if timeout is None else time.monotonic() + timeout
        for conn in self._conns.values():
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            conn.settled.wait(left)

    def statuses(self) -> list[ServerStatus]:
        return [conn.status for conn in self._conns.values()]

    def status(self, name: str) -> ServerStatus:
        return self._conns[name].status

    def close(self) -> None:
        """Stop every connection (each server process is ended by the SDK), then the loop and its thread."""
        if self._loop is None:
            return
        with contextlib.suppress(Exception):
            self._submit(self._close_all()).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        if self._thread is not None:
            self._thread.join(10)
        self._loop = None

    async def _close_all(self) -> None:
        for conn in self._conns.values():
            await self._disconnect(conn)

    # -- one connection ---------------------------------------------------------------------------------------

    async def _open(self, name: str) -> None:
        conn = self._conns[name]
        conn.stop = asyncio.Event()
        started = asyncio.get_running_loop().create_future()
        conn.task = asyncio.create_task(hold_connection(name, conn.status.server, self.log_dir, started, conn.stop,
                                                        lambda tools: self._relisted(conn, tools)))
        limit = start_limit(conn.status.server)
        try:
            client, tools, info = await asyncio.wait_for(asyncio.shield(started), limit)
        except TimeoutError:
            await self._disconnect(conn)
            self._settle(conn, ServerState.FAILED, f"did not finish starting within {limit:g} s "
                                                   f"(its stderr: {self.log_dir / (name + '.log')})")
            return
        except Exception as exc:
            await self._disconnect(conn)
            self._settle(conn, ServerState.FAILED, str(exc))
            return
        conn.client = client
        kept, notes = self._kept(conn, tools)
        self._settle(conn, ServerState.READY, "", tools=kept, notes=notes, server_info=info)

    def _relisted(self, conn: _Connection, tools: list[Any]) -> None:
        """The server's tools changed (tools/list_changed): the next run offers the new list."""
        if conn.status.state is ServerState.READY:
            kept, notes = self._kept(conn, tools)
            conn.status = replace(conn.status, tools=kept, notes=notes)

    def _kept(self, conn: _Connection, tools: list[Any]) -> tuple[tuple[Any, ...], tuple[str, ...]]:
        """The tools to offer (plain names, on the allowlist) and the notes on those refused for their names."""
        plain, notes = plain_tools(conn.status.name, tools)
        return tuple(t for t in plain if conn.status.server.allows(t.name)), tuple(notes)

    def _settle(self, conn: _Connection, state: ServerState, error: str, **more: Any) -> None:
        conn.status = replace(conn.status, state=state, error=error, **more)
        conn.settled.set()

    async def _disconnect(self, conn: _Connection) -> None:
        starting = conn.client is None  # still in its handshake: nothing to wind down gracefully
        conn.client = None
        if conn.stop is not None:
            conn.stop.set()
        if conn.task is not None:
            if starting:
                conn.task.cancel()
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(conn.task, 10)
        conn.task = None

    async def _restart(self, name: str, why: str) -> str:
        """Restart a server that failed a call, once; the note to add to the call's error."""
        conn = self._conns[name]
        await self._disconnect(conn)
        if conn.status.restarts >= MAX_RESTARTS:
            self._settle(conn, ServerState.FAILED, f"{why}; it failed again after a restart, so it stays down")
            return "it failed before and stays down for the rest of the session"
        conn.status = replace(conn.status, state=ServerState.STARTING, restarts=conn.status.restarts + 1)
        conn.settled.clear()
        await self._open(name)
        if conn.status.state is ServerState.READY:
            return "it was restarted"
        return f"restarting it failed: {conn.status.error}"

    # -- calls ------------------------------------------------------------------------------------------------

    def call(self, name: str, tool: str, arguments: dict[str, Any], *, deadline: float | None = None) -> Any:
        """Call one tool and wait for its result (an `mcp.types.CallToolResult`); McpCallError names the server.
        `deadline` (time.monotonic()), the run's: the wait for a starting server and the call end there, the call
        cancelled on the server (`notifications/cancelled`)."""
        conn = self._conns.get(name)
        if conn is None:
            raise McpCallError(f"no MCP server named {name!r}")
        timeout = conn.status.server.timeout_s
        left = math.inf if deadline is None else deadline - time.monotonic()
        conn.settled.wait(max(0.0, min(start_limit(conn.status.server), left)))
        if self._loop is None or conn.status.state is not ServerState.READY:
            state = conn.status.state
            why = f": {conn.status.error}" if conn.status.error else ""
            raise McpCallError(f"mcp server {name!r} is not running ({state}{why})")
        left = math.inf if deadline is None else deadline - time.monotonic()
        if left <= 0:
            raise McpCallError(f"mcp server {name!r}: {tool} was not called: the run's deadline was reached")
        cut = left < timeout  # the run's deadline comes before the server's timeout
        future = self._submit(self._call(name, tool, arguments, min(timeout, left), cut))
        try:
            # the SDK's own timeout comes first; a ping and a restart may follow it, but never past the deadline
            return future.result(min(2 * timeout + PING_S + 15, left + DEADLINE_GRACE_S))
        except TimeoutError:
            future.cancel()
            if cut or left + DEADLINE_GRACE_S < 2 * timeout + PING_S + 15:
                raise McpCallError(f"mcp server {name!r}: {tool} was cut off at the run's deadline") from None
            raise McpCallError(f"mcp server {name!r} did not answer {tool} within {timeout:g} s") from None
        except BaseException:  # Ctrl-C while waiting: cancel the call (the SDK tells the server)
            future.cancel()
            raise

    async def _call(self, name: str, tool: str, arguments: dict[str, Any], timeout: float, cut: bool) -> Any:
        # deferred: the MCP SDK, only when a server is configured or served
        from mcp.shared.exceptions import MCPError
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        conn = self._conns[name]
        client = conn.client
        if client is None:
            raise McpCallError(f"mcp server {name!r} is not running")
        try:
            return await client.call_tool(tool, arguments, read_timeout_seconds=timeout)
        except MCPError as exc:
            code = exc.code
            if code == REQUEST_TIMEOUT:
                if cut:  # the run's time is up: no ping, no restart, just the cancelled call
                    raise McpCallError(f"mcp server {name!r}: {tool} was cut off at the run's deadline (after "
                                       f"{timeout:.1f} s) and cancelled") from None
                if await self._answers_ping(client):
                    raise McpCallError(f"mcp server {name!r}: {tool} took longer than its timeout of {timeout:g} s "
                                       "and was cancelled") from None
                # shielded: a call cut off at the run's deadline still leaves the server restarted, not half-way
                note = await asyncio.shield(self._restart(name, f"stopped answering ({tool} timed out after "
                                                                f"{timeout:g} s)"))
                raise McpCallError(f"mcp server {name!r} stopped answering: {tool} timed out after {timeout:g} s "
                                   f"and was cancelled; {note}") from None
            if code == CONNECTION_CLOSED:
                note = await asyncio.shield(self._restart(name, f"its connection closed during {tool}"))
                raise McpCallError(f"mcp server {name!r} exited or closed the connection during {tool}; "
                                   f"{note}") from None
            raise McpCallError(f"mcp server {name!r} answered {tool} with an error: {exc}") from None
        except McpCallError:
            raise
        except Exception as exc:  # a result that breaks the protocol (schema, output schema, ...)
            raise McpCallError(f"mcp server {name!r} sent an unusable result for {tool}: "
                               f"{_one_line(exc)}") from None

    async def _answers_ping(self, client: Any) -> bool:
        try:
            await asyncio.wait_for(client.send_ping(), PING_S)
            return True
        except Exception:
            return False


def _one_line(exc: BaseException) -> str:
    return one_line(exc)

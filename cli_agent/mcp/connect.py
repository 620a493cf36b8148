"""One server connection, held open by a task of the hub's loop: the SDK's transport and client, entered and left
in that one task (anyio's cancel scopes want it so).

Start-up failures become one line naming what went wrong: a command that cannot run, a process that exited (with
the last line of its stderr), an HTTP endpoint that refused, a handshake that broke the protocol.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli_agent.config import McpServer
from cli_agent.fs import open_host_file
from cli_agent.mcp.server_log import ServerLog

MAX_TOOL_PAGES = 20  # a server whose tools/list never stops paging is cut here


async def hold_connection(name: str, server: McpServer, log_dir: Path, started: asyncio.Future[Any],
                          stop: asyncio.Event, on_tools: Callable[[list[Any]], None]) -> None:
    """Connect, list the tools, report `(client, tools, server_info)` through `started`, then hold the connection
    until `stop` is set; when the server says its tools changed, list them again and hand them to `on_tools`. A
    failure before that is reported through `started` as an exception with a one-line message; after it, the
    connection just ends (the next call finds out)."""
    log = log_dir / f"{name}.log"
    garbage: list[str] = []  # what the server wrote to stdout that is not MCP, while starting
    relisting: set[asyncio.Task[None]] = set()

    async def relist() -> None:
        with contextlib.suppress(Exception):  # a failed listing keeps the tools we have
            on_tools(await list_all_tools(client))

    async def on_message(message: Any) -> None:
        from mcp_types import ToolListChangedNotification  # deferred: the MCP SDK, only with a server

        if isinstance(message, Exception) and not started.done() and not garbage:
            garbage.append(one_line(message))
        elif isinstance(message, ToolListChangedNotification) and started.done():
            task = asyncio.get_running_loop().create_task(relist())  # not inline: the answer comes through here
            relisting.add(task)
            task.add_done_callback(relisting.discard)

    try:
        _route_sdk_log(log_dir)
        async with contextlib.AsyncExitStack() as stack:
            import mcp  # deferred: the MCP SDK, only when a server is configured or served

            transport, stderr = await _transport(stack, server, log)
            client = await stack.enter_async_context(mcp.Client(transport, mode="legacy", cache=None,
                                                                message_handler=on_message))
            if stderr is not None:
                stderr.spawned()
            tools = await list_all_tools(client)
            info = client.server_info
            if not started.done():
                started.set_result((client, tools, f"{info.name} {info.version}".strip() if info else ""))
            await stop.wait()
    except BaseException as exc:  # whatever ended it, the hub hears one line
        if not started.done():
            why = describe_start_failure(server, exc, log)
            if garbage:
                why += f"; it wrote to stdout what is not MCP ({garbage[0][:160]})"
            started.set_exception(RuntimeError(why))
        if isinstance(exc, asyncio.CancelledError):
            raise


async def list_all_tools(client: Any) -> list[Any]:
    from mcp_types import PaginatedRequestParams  # deferred: the MCP SDK, only when a server is configured or served

    tools: list[Any] = []
    cursor = None
    for _ in range(MAX_TOOL_PAGES):
        page = await client.session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.next_cursor
        if not cursor:
            break
    return tools


async def _transport(stack: contextlib.AsyncExitStack, server: McpServer, log: Path) -> tuple[Any, ServerLog | None]:
    """The SDK's transport, and for a stdio server the log its stderr goes to (capped, see server_log)."""
    if server.command is not None:
        # deferred: the MCP SDK, only when a server is configured or served
        from mcp.client.stdio import StdioServerParameters, stdio_client

        stderr = ServerLog(log)
        stack.callback(stderr.close)
        params = StdioServerParameters(command=server.command, args=list(server.args), env=dict(server.env) or None,
                                       cwd=working_folder(server, log.parent / "run" / log.stem))
        return stdio_client(params, errlog=stderr.writer), stderr
    # deferred: the MCP SDK and its HTTP client, only when a server is configured or served
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    assert server.url is not None
    http = await stack.enter_async_context(httpx2.AsyncClient(headers=dict(server.headers),
                                                              timeout=httpx2.Timeout(30.0, read=300.0)))
    return streamable_http_client(server.url, http_client=http), None


def working_folder(server: McpServer, private: Path) -> Path:
    """Where a stdio server runs: its configured `cwd`, else `private`, a folder of its own (created empty), never
    the folder cli-agent was started in. A server started there would find the workspace's files first: Python's
    `-m` and `-c` put the current folder first on the module path, npx and node look for `node_modules` upwards from
    it, and a relative command or PATH entry resolves in it. So no repository code runs by accident."""
    if server.cwd is not None:
        return Path(server.cwd).expanduser()
    private.mkdir(parents=True, exist_ok=True)
    return private


def describe_start_failure(server: McpServer, exc: BaseException, log: Path) -> str:
    """One line: why the server did not start."""
    leaf = _leaf(exc)
    if isinstance(leaf, asyncio.CancelledError):
        return "stopped while starting"
    if isinstance(leaf, OSError) and server.command is not None and not _is_network(leaf):
        return f"could not start {server.command!r}: {leaf.strerror or leaf}"
    message = one_line(leaf)
    if server.command is not None:
        last = _last_line(log)
        tail = f" (its last stderr line: {last})" if last else ""
        if "closed" in message.lower():
            return f"exited before it finished starting{tail}"
        return f"failed to start: {message[:300]}{tail}"
    return f"could not connect to {server.url}: {message[:300]}"


def one_line(exc: BaseException) -> str:
    """An exception as one short line (pydantic's links and error codes left out)."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    text = re.sub(r"\s*\[type=[^\]]*\]|\s*For further information visit \S+", "", text)
    return text if len(text) <= 300 else text[:297] + "..."


def _leaf(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _is_network(exc: OSError) -> bool:
    return type(exc).__module__.startswith(("httpx", "httpcore"))


def _last_line(log: Path) -> str:
    try:
        with os.fdopen(open_host_file(log, follow=False), "rb") as f:
            f.seek(0, 2)
            f.seek(max(0, f.tell() - 4096))
            lines = [line.strip() for line in f.read(4096).decode("utf-8", "replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return lines[-1][:200] if lines else ""


def _route_sdk_log(log_dir: Path) -> None:
    """The SDK logs protocol trouble (garbage on a server's stdout, ...): into a file, never the terminal."""
    logger = logging.getLogger("mcp")
    if logger.handlers:
        return
    logger.propagate = False
    try:
        log_dir.mkdir(parents=True, exist_ok=True)
        handler: logging.Handler = logging.FileHandler(log_dir / "client.log", encoding="utf-8")
    except OSError:
        handler = logging.NullHandler()
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)

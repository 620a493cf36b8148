"""`cli-agent acp`: the Agent Client Protocol's agent side, over stdio, with the official SDK.

A client (an editor) initializes, opens sessions (`session/new` with its working directory as the workspace, or
`session/load` of a cli-agent session by id, whose conversation is replayed as updates), and sends prompts. Each
session is a cli-agent `Session` opened as the CLI opens one: the same layered config and folder trust (an
untrusted folder's project config only narrows, and the keys it ignored are named to the client), the same
sandbox, approval policy, journal, trace and session index. A turn runs in a worker thread (`turn.Turn`); the
approval modes `ask`, `plan`, `edits` and `all` are the session modes. Workflows are offered as slash commands.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import datetime
import logging
import os
import signal
import sqlite3
import sys
import uuid
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, RequestError, schema
from acp.agent.connection import AgentSideConnection

from cli_agent import __version__
from cli_agent.agent import ApprovalMode
from cli_agent.contracts import RunFinished, StopReason, dataclass, errors
from cli_agent.history import SessionIndex, load_resumable
from cli_agent.serve.acp import updates
from cli_agent.serve.acp.background import ProcessFeed
from cli_agent.serve.acp.requests import client_servers, prompt_text
from cli_agent.serve.acp.turn import Outcome, Turn
from cli_agent.serve.acp.wire import LINE_LIMIT, StdioWire, log_to_stderr, stdio_streams
from cli_agent.session import load_for, open_session, provider_factory, resume_into
from cli_agent.workflows import load_workflows, missing_message, parse_arguments, run_workflow

if TYPE_CHECKING:
    from cli_agent.contracts import AppState, EventStream
    from cli_agent.session import Session

__all__ = ["serve"]

_log = logging.getLogger("cli_agent.serve.acp")
_LISTED = 200  # sessions session/list returns, last used first
_ANSWER_WAIT = 30.0  # seconds the requests in flight at the end of input get to be answered
MODES = [
    schema.SessionMode(id=ApprovalMode.ASK.value, name="Ask", description="Every change is asked for."),
    schema.SessionMode(id=ApprovalMode.PLAN.value, name="Plan",
                       description="Read only: the model reads and plans; nothing changes until you switch to "
                                   "another mode to carry the plan out."),
    schema.SessionMode(id=ApprovalMode.EDITS.value, name="Edits",
                       description="Creating and editing files is approved; deleting and commands' changes are "
                                   "asked for."),
    schema.SessionMode(id=ApprovalMode.ALL.value, name="All",
                       description="Every change is approved (protected and locked paths stay refused)."),
]


def _refusal(exc: errors.CliAgentError) -> RequestError:
    """A cli-agent error as the request's JSON-RPC error: bad input (exit 2) is invalid params."""
    return RequestError(-32602 if exc.exit_code == 2 else -32603, str(exc))


@dataclass
class _Open:
    """A session of this process: the cli-agent session, its turn while one runs, the tools rejected for good."""

    session: Session
    root: Path
    turn: Turn | None = None
    running: concurrent.futures.Future[None] | None = None  # the worker running `turn`, to its very end
    refused: set[str] = field(default_factory=set)
    greeting: asyncio.Task[None] | None = None  # the updates after session/new or load; a turn's come after them
    feed: ProcessFeed | None = None  # its background processes' tool calls, followed once one starts


class AcpAgent:
    """The protocol's agent methods (the SDK routes each request to the method of its name)."""

    def __init__(self, state: AppState, pool: concurrent.futures.ThreadPoolExecutor) -> None:
        self._state = state
        self._pool = pool
        self._client: Any = None
        self._sessions: dict[str, _Open] = {}
        self._initialized = False
        self.busy: set[asyncio.Task[Any]] = set()  # requests being answered: finished before the process ends

    def _enter(self) -> None:
        """Count the current request as in flight until it is answered."""
        task = asyncio.current_task()
        if task is not None:
            self.busy.add(task)
            task.add_done_callback(self.busy.discard)

    def on_connect(self, conn: Any) -> None:
        self._client = conn

    # -- set-up ------------------------------------------------------------------------------------------------

    async def initialize(self, protocol_version: int, client_capabilities: Any = None, client_info: Any = None,
                         **kwargs: Any) -> schema.InitializeResponse:
        self._enter()
        self._initialized = True
        capabilities = schema.AgentCapabilities(
            load_session=True,
            session_capabilities=schema.SessionCapabilities(list=schema.SessionListCapabilities()),
            prompt_capabilities=schema.PromptCapabilities(image=False, audio=False, embedded_context=True),
            mcp_capabilities=schema.McpCapabilities(http=True, sse=False))
        return schema.InitializeResponse(protocol_version=min(protocol_version, PROTOCOL_VERSION),
                                         agent_capabilities=capabilities, auth_methods=[],
                                         agent_info=schema.Implementation(name="cli-agent", title="cli-agent",
                                                                          version=__version__))

    def _ready(self) -> None:
        self._enter()
        if not self._initialized:
            raise RequestError(-32600, "call initialize first")

    def _get(self, session_id: str) -> _Open:
        self._ready()
        found = self._sessions.get(session_id)
        if found is None:
            raise RequestError(-32602, f"no session {session_id!r} in this process: open it with "
                               "session/new or session/load")
        return found

    def _open(self, cwd: str, servers: list[Any] | None) -> Session:
        """A cli-agent session for the client's working directory, with the client's MCP servers besides the
        config's (in a worker thread: it starts MCP servers)."""
        if not os.path.isabs(cwd):
            raise RequestError(-32602, f"cwd must be an absolute path, got {cwd!r}")
        extra = client_servers(servers)
        try:
            loaded = load_for(self._state, announce=False, workspace=cwd)
            settings = loaded.settings
            if extra:
                settings = dataclasses.replace(settings, mcp_servers={**settings.mcp_servers, **extra})
            return open_session(settings, interactive=True, provider_factory=provider_factory(self._state),
                                notes=loaded.notes)
        except errors.CliAgentError as exc:
            raise _refusal(exc) from None

    async def new_session(self, cwd: str, mcp_servers: Any = None, additional_directories: Any = None,
                          **kwargs: Any) -> schema.NewSessionResponse:
        self._ready()
        session = await asyncio.to_thread(self._open, cwd, mcp_servers)
        session_id = session.session_id or uuid.uuid4().hex[:8]
        opened = self._sessions[session_id] = _Open(session, session.workspace.root)
        opened.greeting = asyncio.get_running_loop().create_task(self._greet(session_id))
        return schema.NewSessionResponse(session_id=session_id, modes=self._modes(session))

    async def load_session(self, cwd: str, session_id: str, mcp_servers: Any = None,
                           additional_directories: Any = None, **kwargs: Any) -> schema.LoadSessionResponse:
        self._ready()
        if session_id in self._sessions:
            raise RequestError(-32600, f"session {session_id} is already open in this process")
        await asyncio.to_thread(_saved, session_id)
        session = await asyncio.to_thread(self._resumed, cwd, session_id, mcp_servers)
        opened = _Open(session, session.workspace.root)
        self._sessions[session_id] = opened  # the client's id (a unique prefix of the index's finds it too)
        for update in updates.history_updates(session.agent.history, opened.root, session.registry):
            await self._client.session_update(session_id=session_id, update=update)
        opened.greeting = asyncio.get_running_loop().create_task(self._greet(session_id))
        return schema.LoadSessionResponse(modes=self._modes(session))

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> schema.ListSessionsResponse:
        """The cli-agent sessions of `cwd` (absent: the folder this command was started for), last used first: what
        `cli-agent sessions` lists, and what session/load takes. One page holds them all."""
        self._ready()
        if cursor:
            return schema.ListSessionsResponse(sessions=[])
        folder = cwd or (self._state.flags or {}).get("workspace") or os.getcwd()
        if not os.path.isabs(folder):
            folder = os.path.abspath(folder)
        entries = await asyncio.to_thread(_listed, folder)
        return schema.ListSessionsResponse(sessions=[
            schema.SessionInfo(session_id=e.id, cwd=e.workspace, title=e.first_message[:80] or None,
                               updated_at=datetime.datetime.fromtimestamp(e.updated, datetime.UTC).isoformat())
            for e in entries])

    def _resumed(self, cwd: str, session_id: str, servers: list[Any] | None) -> Session:
        session = self._open(cwd, servers)
        try:
            entry, trace = load_resumable(session.workspace.root, session_id)
            resume_into(session, entry, trace)
        except errors.CliAgentError as exc:
            session.close()
            raise _refusal(exc) from None
        return session

    def _modes(self, session: Session) -> schema.SessionModeState:
        return schema.SessionModeState(current_mode_id=session.agent.policy.mode.value, available_modes=MODES)

    async def _greet(self, session_id: str) -> None:
        """After a session opens: its slash commands (the workflows), and the notes about its set-up (a project
        config's keys ignored in an untrusted folder, commands without a sandbox, ...)."""
        opened = self._sessions.get(session_id)
        if opened is None:
            return
        try:
            if opened.session.notes:
                text = "\n".join(f"cli-agent: {note}" for note in opened.session.notes)
                await self._client.session_update(session_id=session_id, update=updates.text_chunk(text + "\n\n"))
            commands = await asyncio.to_thread(self._commands, opened)
            await self._client.session_update(session_id=session_id, update=schema.AvailableCommandsUpdate(
                session_update="available_commands_update", available_commands=commands))
        except (ConnectionError, RequestError) as exc:
            _log.warning("could not greet session %s: %s", session_id, exc)

    def _commands(self, opened: _Open) -> list[schema.AvailableCommand]:
        catalog = load_workflows(opened.session.workspace, trusted=self._trusted())
        return [schema.AvailableCommand(name=wf.name, description=wf.description or wf.title,
                                        input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(
                                            hint=" ".join(p.usage for p in wf.params))) if wf.params else None)
                for wf in catalog.workflows.values()]

    def _trusted(self) -> bool | None:
        return True if (self._state.flags or {}).get("trust") else None

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> schema.SetSessionModeResponse:
        opened = self._get(session_id)
        try:
            mode = ApprovalMode(mode_id)
        except ValueError:
            raise RequestError(-32602, f"unknown mode {mode_id!r}: ask, plan, edits or all") from None
        opened.session.set_mode(mode)
        await self._client.session_update(session_id=session_id, update=schema.CurrentModeUpdate(
            session_update="current_mode_update", current_mode_id=mode.value))
        return schema.SetSessionModeResponse()

    # -- turns ---------------------------------------------------------------------------------------------------

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> schema.PromptResponse:
        opened = self._get(session_id)
        if opened.turn is not None and opened.running is not None:
            if not opened.turn.answered.done():
                raise RequestError(-32600, "a turn is already running in this session: wait "
                                   "for it, or session/cancel it")
            await asyncio.wrap_future(opened.running)  # the last turn's tail: its index entry, its journal turn
        if opened.greeting is not None:
            await opened.greeting
        text = prompt_text(prompt, opened.root)
        processes = opened.session.commands.processes if opened.session.commands is not None else None
        if opened.feed is None and processes is not None:
            opened.feed = ProcessFeed(session_id, self._client, asyncio.get_running_loop(), processes)
        turn = Turn(session_id, opened.root, self._client, asyncio.get_running_loop(), opened.session.trace,
                    opened.refused, registry=opened.session.registry,
                    follow=opened.feed.follow if opened.feed is not None else None)
        opened.turn = turn
        opened.running = self._pool.submit(self._run, opened, turn, text)
        try:
            outcome = await asyncio.shield(asyncio.wrap_future(turn.answered))
        except asyncio.CancelledError:
            turn.cancel()
            raise
        reason = updates.stop_reason(outcome.finished, outcome.finish_reason, outcome.warning)
        if turn.cancelled:  # the protocol's rule: a cancelled turn ends "cancelled", whatever it had come to
            reason = "cancelled"
        if reason is None:
            raise RequestError(-32603, outcome.finished.message)
        return schema.PromptResponse(stop_reason=reason)

    def _run(self, opened: _Open, turn: Turn, text: str) -> None:
        """The turn, in a worker thread: a workflow for `/name args`, else a run of the loop. Its answer is
        `turn.answered`, set once the run has finished (before the session index notes it)."""
        try:
            events, runs = self._events(opened, text)
            turn.drive(events, runs=runs)
        except errors.CliAgentError as exc:  # a workflow's bad arguments, found before it runs
            turn.note(f"cli-agent: {exc}")
            turn.answer(Outcome(RunFinished(stop_reason=StopReason.DONE, message=str(exc))))
        except BaseException as exc:  # a bug: this turn fails with its message; the process and the session go on
            _log.warning("the turn failed: %s: %s", type(exc).__name__, exc)
            turn.answer(Outcome(RunFinished(stop_reason=StopReason.ERROR,
                                            message=f"internal error: {type(exc).__name__}: {exc}")))
        finally:
            opened.turn = opened.running = None

    def _events(self, opened: _Open, text: str) -> tuple[EventStream, int]:
        """The turn's events and how many runs they hold (0: a workflow's, as many as its steps that run)."""
        name, _, rest = text.removeprefix("/").partition(" ")
        if text.startswith("/") and name:
            workflow = load_workflows(opened.session.workspace, trusted=self._trusted()).get(name)
            if workflow is not None:
                values, missing = parse_arguments(workflow, rest, opened.session.workspace)
                if missing:
                    raise errors.WorkflowError(missing_message(workflow, missing))
                return run_workflow(opened.session, workflow, values, None), 0
        return opened.session.run(text, None), 1

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        opened = self._sessions.get(session_id)
        if opened is not None and opened.turn is not None:
            opened.turn.cancel()

    # -- the end -------------------------------------------------------------------------------------------------

    def cancel_all(self) -> list[concurrent.futures.Future[None]]:
        running = []
        for opened in self._sessions.values():
            if opened.turn is not None:
                opened.turn.cancel()
            if opened.running is not None:
                running.append(opened.running)
        return running

    def close_all(self) -> None:
        for session_id, opened in list(self._sessions.items()):
            try:
                opened.session.close()
            except Exception as exc:  # one session failing to close never stops the others
                _log.warning("closing session %s: %s: %s", session_id, type(exc).__name__, exc)
        self._sessions.clear()


def _listed(folder: str) -> list[Any]:
    try:
        return SessionIndex().list(folder, limit=_LISTED)
    except (sqlite3.Error, OSError, errors.CliAgentError) as exc:
        raise RequestError(-32603, f"cannot read the session index: {exc}") from None


def _saved(session_id: str) -> None:
    """A session the index knows (a unique prefix of its id will do); else the error says when one is saved."""
    try:
        SessionIndex().get(session_id)
    except errors.UsageError as exc:
        raise RequestError(-32602, f"{exc}. A session is saved, and can be loaded, once it has answered a prompt: "
                                   "one from session/new that was never prompted cannot be (open a new one)") from None
    except sqlite3.Error as exc:
        raise RequestError(-32603, f"cannot read the session index: {exc}") from None


def serve(state: AppState) -> int:
    """Serve the protocol on stdin and stdout until the client closes stdin (or SIGTERM); 0 then."""
    log_to_stderr()
    if sys.stdin.isatty():
        _log.warning("waiting for an ACP client on stdin: an editor starts this command itself (see docs/editors.md "
                     "for Zed, JetBrains and Toad); Ctrl-D ends it")
    return asyncio.run(_serve(state))


async def _serve(state: AppState) -> int:
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    stdout, sys.stdout = sys.stdout, sys.stderr  # the protocol owns file descriptor 1: a stray print goes to stderr
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stop.set)
    pool = concurrent.futures.ThreadPoolExecutor(thread_name_prefix="acp-turn")
    agent = AcpAgent(state, pool)
    conn = AgentSideConnection(cast(Any, agent), StdioWire(reader, writer), listening=False)
    listening = asyncio.create_task(conn.listen())
    stopping = asyncio.create_task(stop.wait())
    try:
        await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        running = agent.cancel_all()  # the client is gone or we are told to stop: each turn ends at its next event
        if running:
            await asyncio.wait([asyncio.wrap_future(f) for f in running])
        if agent.busy:  # what was asked before the input ended is still answered
            await asyncio.wait(set(agent.busy), timeout=_ANSWER_WAIT)
        stopping.cancel()
        await conn.close()
        listening.cancel()
        pool.shutdown(wait=True)
        agent.close_all()
        sys.stdout = stdout
    return 0

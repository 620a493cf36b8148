"""A session: the settings turned into a workspace, a registry, a provider, an agent and a trace (its parts made
by `cli_agent.session.builder`).

Every front end (one-shot, REPL, workflows, eval) opens a `Session` and drives its runs through `drive`, which
feeds each event to the trace and to the front end, and turns a Ctrl-C or SIGTERM that lands in the front end into
a properly finished run. The provider comes from an injectable factory, so tests plug the scripted provider in
without patching anything.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Collection, Generator
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.agent import Agent, Approver, apply_reset
from cli_agent.contracts import (
    ConversationReset,
    Event,
    EventStream,
    RunFinished,
    RunStarted,
    Warning,
    dataclass,
    errors,
)
from cli_agent.history import TraceWriter, adopt, default_trace_path, note_turn, raw_records, read_trace, writable
from cli_agent.prompt import planned_protocol
from cli_agent.providers import make_provider
from cli_agent.session.builder import agent_for, assemble, start_mcp

if TYPE_CHECKING:
    from cli_agent.agent import ApprovalMode, CandidateRun
    from cli_agent.config import Settings
    from cli_agent.contracts import ImagePart, ToolCall
    from cli_agent.fs import Workspace
    from cli_agent.history import Journal, SessionEntry, Trace
    from cli_agent.mcp import McpAttachment
    from cli_agent.providers import Provider
    from cli_agent.tools import CommandSetup, Registry

__all__ = [
    "ProviderFactory", "Session", "default_provider_factory", "drive", "open_session", "resume_into",
]

ProviderFactory = Callable[["Settings"], "Provider"]


def default_provider_factory(settings: Settings) -> Provider:
    if not settings.model:
        raise errors.UsageError("no model configured: pass --model (e.g. openai/gpt-4o-mini, or scripted:FILE.json), "
                                "set CLI_AGENT_MODEL, or set model in config.toml")
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return make_provider(settings.model, api_base=settings.api_base, api_key=key, local=settings.local,
                         cache=settings.cache, reasoning_effort=settings.reasoning_effort)


@dataclass
class Session:
    settings: Settings
    workspace: Workspace
    registry: Registry
    provider: Provider
    agent: Agent
    trace_path: Path
    trace: TraceWriter
    protocol: str
    interactive: bool
    notes: list[str] = field(default_factory=list)  # one-line facts about the set-up to show the user
    session_id: str = ""  # its row in the session index (cli_agent.history.session_index); "" when not recorded
    journal: Journal | None = None  # the undo journal; None for eval and replay sessions
    mcp: McpAttachment | None = None  # the MCP servers of the config, connecting in the background
    commands: CommandSetup | None = None  # how run_command runs (its sandbox); None when it is off

    def run(self, prompt: str, approve: Approver | None, *, only_tools: Collection[str] | None = None,
            command: str = "", images: tuple[ImagePart, ...] = ()) -> EventStream:
        """One run of the agent; `command`: what the user typed when `prompt` was made from it (a workflow's
        `/refactor calc.py`), which the trace, the undo journal and the session index keep as what was asked."""
        notes = self.attach_mcp_tools()
        if self.journal is not None:  # one run is one turn of the undo journal
            self.journal.begin_turn(self.session_id, command or prompt)
        events: EventStream = self._turn(self.agent.run(prompt, approve, only_tools=only_tools, images=images))
        events = _with_notes(events, notes) if notes else events
        events = _typed(events, command) if command else events
        return self._noted(command or prompt, events) if self.session_id else events

    def _turn(self, events: EventStream) -> EventStream:
        """The run's events, with the journal's turn lock held (shared) while they come: no undo meanwhile."""
        if self.journal is None:
            return (yield from events)
        with self.journal.running():
            return (yield from events)

    def attach_mcp_tools(self) -> list[str]:
        """Join the tools of the MCP servers that are ready to the registry (waiting for those still starting, at
        most their start-up limit and never longer than a run may take); the new notes about them (a server that
        failed, a tool skipped)."""
        if self.mcp is None:
            return []
        registry, notes = self.mcp.registry(wait=min(self.mcp.hub.start_limit(), self.settings.timeout))
        if registry is not self.registry:
            self.use_registry(registry)
        return notes

    def use_registry(self, registry: Registry) -> None:
        """Offer and dispatch the tools of `registry` from the next run on (the built-ins grown by MCP tools)."""
        self.registry = registry
        self.agent.use_registry(registry)

    def switch_model(self, provider: Provider, settings: Settings, protocol: str, *, keep: bool) -> None:
        """Send the next runs to `provider` (the model of `settings`, speaking `protocol`); `keep`: the
        conversation carries over, else a new one starts (recorded in the trace as a reset). The old provider is
        the caller's to close."""
        self.agent.switch_model(provider, settings.model or "", protocol, settings)
        if not keep:
            self.reset(ConversationReset(kind="clear"))
        self.provider, self.settings, self.protocol = provider, settings, protocol

    def reset(self, reset: ConversationReset) -> None:
        """Start the conversation again (`/compact`, a model that can't read it), recorded in the trace."""
        apply_reset(self.agent, reset)
        self.trace(reset)

    def rewind(self, run_id: str) -> None:
        """Take the conversation back to where it was before the run `run_id` (`/rewind`): recorded in the trace as a
        reset, which a resume follows too; the runs since stay in the trace, marked rewound by it."""
        self.trace(ConversationReset(kind="rewind", run_id=run_id))
        self.agent.clear(read_trace(self.trace_path, complete=False).conversation())

    def add_note(self, text: str) -> None:
        """Between runs, a note from the user's side (an /undo) joins the conversation, recorded in the trace."""
        self.trace(self.agent.add_note(text))

    def set_mode(self, mode: ApprovalMode, *, keep_grants: bool = True) -> None:
        """Another approval mode from the next call on; `keep_grants=False` forgets the tools approved so far."""
        self.agent.set_mode(mode, keep_grants=keep_grants)

    def _noted(self, prompt: str, events: EventStream) -> EventStream:
        """The run's events, then the turn noted in the session index (the session added once the model has
        answered): after the turn, so the index's commit (an fsync, tens of ms on a busy disk) never delays an
        answer."""
        answered, status = False, "interrupted"
        try:
            finished = yield from _watched(events, lambda e: e.type == "assistant_message")
            answered, status = finished[1], finished[0].stop_reason.value if finished[0] is not None else status
            return finished[0]
        finally:
            note_turn(self.session_id, prompt, status, answered=answered, workspace=self.workspace.root,
                      model=self.settings.model or "", trace_path=self.trace_path)

    def run_call(self, call: ToolCall, approve: Approver | None, *, by: str = "The workflow",
                 command: str = "", attach: Callable[[], bool] | None = None) -> EventStream:
        """`Agent.run_call` (a workflow's tool step, the user's !COMMAND) as a turn of its own in the undo
        journal; `command`: what the user typed, as in `run`; `attach`: asked whether the result joins the
        conversation."""
        notes = self.attach_mcp_tools()
        if self.journal is not None:
            self.journal.begin_turn(self.session_id, command)
        events = self._turn(self.agent.run_call(call, approve, by=by, attach=attach))
        events = _with_notes(events, notes) if notes else events
        return _typed(events, command) if command else events

    def stop_processes(self) -> int:
        """Kill the session's background processes (nothing they changed is applied); how many were running."""
        if self.commands is None or self.commands.processes is None:
            return 0
        return self.commands.processes.stop_all()

    def close(self) -> None:
        try:
            self.stop_processes()
            if self.commands is not None and self.commands.net is not None:
                self.commands.net.close()  # the network proxy, with its socket
            if self.mcp is not None:
                self.mcp.close()
            self.provider.close()
        finally:
            self.trace.close()


def _typed(events: EventStream, command: str) -> EventStream:
    """The run's events, its RunStarted (the first) saying what the user typed."""
    first = next(events)
    yield dataclasses.replace(first, command=command) if isinstance(first, RunStarted) else first
    return (yield from events)


def _provider_notes(provider: Provider, settings: Settings) -> list[str]:
    """What the provider says of the settings (a reasoning effort its model ignores); asked only when such a
    setting is given, so a plain session never imports LiteLLM here."""
    if not settings.reasoning_effort:
        return []
    notes = getattr(provider, "notes", None)
    if callable(notes):
        return list(notes())
    return [f"{provider.name} takes no reasoning effort: reasoning_effort = {settings.reasoning_effort!r} is not sent"]


def _with_notes(events: EventStream, notes: list[str]) -> EventStream:
    """The run's events with a warning for each note right after RunStarted (so the trace and the UI show them)."""
    yield next(events)
    for note in notes:
        yield Warning(code="mcp", message=note)
    return (yield from events)


def drive(events: EventStream, *sinks: Callable[[Event], None]) -> RunFinished:
    """Feed every event to every sink; a Ctrl-C or SIGTERM raised inside a sink is thrown into the run, which
    finishes it cleanly. Returns the run's RunFinished."""
    finished: RunFinished | None = None
    pending: BaseException | None = None
    while True:
        try:
            event = events.throw(pending) if pending is not None else next(events)
        except StopIteration:
            break
        pending = None
        try:
            for sink in sinks:
                sink(event)
        except (KeyboardInterrupt, errors.TerminateSignal) as exc:
            if isinstance(event, RunFinished):
                raise
            pending = exc
        if isinstance(event, RunFinished):
            finished = event
    if finished is None:  # the loop always ends with RunFinished; this is a bug guard, not a path
        raise errors.CliAgentError("internal error: the run ended without a result")
    return finished


def open_session(settings: Settings, *, interactive: bool, provider_factory: ProviderFactory = default_provider_factory,
                 record: bool = True, notes: Collection[str] = ()) -> Session:
    """`record`: add the session to the session index (eval and replay don't). `notes`: the loader's one-line
    warnings, shown with the session's own (the banner, `--output json`)."""
    root = Path(settings.workspace)
    if not root.is_dir():
        raise errors.UsageError(f"workspace is not a folder: {root}")
    parts = assemble(settings, journal=record)  # every change of a recorded session is journaled first, for undo
    settings, workspace, registry = parts.settings, parts.workspace, parts.registry
    provider = provider_factory(settings)
    protocol = planned_protocol(settings, provider.supports_native_tools)
    mcp = start_mcp(settings, registry) if protocol != "plain" else None
    dispatcher = parts.dispatcher(allowed=[spec.name for spec in registry.specs() if spec.exposed_to_model])
    agent = agent_for(settings, workspace, provider, protocol, dispatcher, interactive=interactive,
                      candidate=_candidate(settings, provider))
    trace_path = Path(settings.trace).expanduser() if settings.trace else default_trace_path()
    try:
        trace = TraceWriter(trace_path, {"workspace": str(workspace.root), "model": settings.model,
                                         "api_base": settings.api_base, "protocol": protocol})  # never the key
    except OSError as exc:
        provider.close()
        if mcp is not None:
            mcp.close()
        raise errors.UsageError(f"cannot write the trace {trace_path}: {exc.strerror or exc}") from exc
    session = Session(settings, workspace, registry, provider, agent, trace_path, trace, protocol, interactive,
                      notes=[*notes, *parts.notes, *_provider_notes(provider, settings)], journal=parts.journal,
                      mcp=mcp, commands=parts.commands)
    if record:  # in the index once the model answers a run (Session._noted)

        problem = writable()
        session.session_id = "" if problem else uuid.uuid4().hex[:8]
        session.notes.extend([problem] if problem else [])
    return session


def _watched(events: EventStream, seen: Callable[[Event], bool]) -> Generator[Event, Any, tuple[Any, bool]]:
    """`yield from events` that also notes whether `seen` held for one of them: sent decisions and thrown signals
    (a Ctrl-C the front end throws in, which the run finishes cleanly) pass through. Returns (the run's value, the
    note)."""
    hit, send, throw = False, None, None
    while True:
        try:
            event = events.throw(throw) if throw is not None else events.send(send) if send is not None \
                else next(events)
        except StopIteration as stop:
            return stop.value, hit
        send, throw = None, None
        hit = hit or seen(event)
        try:
            send = yield event
        except GeneratorExit:
            events.close()
            raise
        except BaseException as exc:
            throw = exc


def resume_into(session: Session, entry: SessionEntry, trace: Trace) -> None:
    """Give a freshly opened session the conversation of `entry`: its history, its trace's events (copied to the
    head of the new trace), and its place in the session index. Call it before the session's first run (a REPL's
    `/resume` opens a new session for it)."""
    session.agent.clear(trace.conversation())
    for record in raw_records(entry.trace_path):  # raw, so what the old trace kept about each change survives
        session.trace.write_record(record)
    new_id, session.session_id = session.session_id, entry.id
    adopt(entry.id, new_id, session.trace_path, session.settings.model or "")


CANDIDATE_TEMPERATURE = 0.7  # candidates differ only when sampled (when no temperature is configured)


def _candidate(settings: Settings, provider: Provider) -> CandidateRun:
    """How one more candidate runs when a change still fails the tests or never lands (`attempts` > 1): a session of
    its own on a copy of the workspace, with the same provider, every change approved inside the copy, sampled at a
    temperature. Candidates take turns: the first extra one (number 2), and every other one after it, rewrites the
    task's definitions as plain code (cli_agent.agent.judge.rewrite); the others run the agent loop again. With
    `rewrite_first` the run itself gives way at once, and the rewrites are numbers 1, 3, ...; the loop 2, 4, ..."""
    rewrites = 1 if settings.rewrite_first else 0

    def candidate(copy: Path, prompt: str, seconds: float, number: int) -> EventStream:
        temperature = settings.temperature or CANDIDATE_TEMPERATURE
        inner = replace(settings, workspace=str(copy), yes=True, attempts=1, mcp_servers={},
                        timeout=max(seconds, 1.0), trace=str(copy.parent / "trace.jsonl"), temperature=temperature)
        session = open_session(inner, interactive=False, provider_factory=lambda _settings: provider, record=False)
        try:
            if number % 2 == rewrites:
                return (yield from session.agent.rewrite(prompt, temperature))
            return (yield from session.agent.run(prompt))
        finally:
            session.trace.close()

    return candidate

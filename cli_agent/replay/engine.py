"""Replay: run a recorded session again and report the first place it goes differently.

`replay(path)` reads the trace strictly (`read_trace`: an unknown format, a damaged line or a truncated trace is a
TraceError, exit 2), copies the trace's workspace into a temporary folder and rewinds the copy (`rewind`:
the trace holds the workspace's path, not its content, and the folder now holds what the runs left). Then it opens
a session on the copy whose provider plays the recorded replies back through the ScriptedProvider (a provider
error, missing key or timeout a run ended with is raised again at the same request) and whose approver gives the
recorded answers, and drives every recorded run through it. Each run's significant events (calls and their
arguments, approvals, result ok/errors, what a change wrote, read-only results' data, the stop reason and answer)
are compared with the recording's as they happen (`compare`); a run the user interrupted is interrupted at the
same point.

A trace is data anyone can edit, so replay runs no command from it unless told to: a recorded `run_command` is
played back like an MCP tool (its recorded result, in order; the recorded answers decide whether it goes ahead;
nothing runs, so the files it changed are not changed in the copy). `--run-commands` runs them, only in the command
sandbox and only on the copy; without a sandbox (none here, or `sandbox = "off"`) it is refused. File tools act on
the temporary copy only, never on the workspace.

Known limits: the copy starts from the workspace as it is now, rewound as far as the trace allows, so a file that
changed since the run, or whose earlier content the trace does not hold, can make the replay diverge (the notes
say which). A workflow's tool subset is not in the trace. Today's config, facts and tool specs are used (plus any
lock the recording was refused by); a different prompt plan is noted, not counted as a divergence.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from cli_agent.agent import apply_reset
from cli_agent.contracts import (
    ConversationReset,
    Event,
    EventStream,
    MessagesAppended,
    ModelRequest,
    RunFinished,
    RunStarted,
    ToolCallsProposed,
    ToolResult,
    dataclass,
    errors,
)
from cli_agent.fs import broad_reason
from cli_agent.history import Trace, raw_records, read_trace
from cli_agent.replay.compare import Comparator, Divergence, written
from cli_agent.replay.provider import RecordedApprover, ReplayProvider, first_call, outcomes, replay_settings
from cli_agent.replay.recorded_tools import RecordedResults, with_recorded_tools
from cli_agent.replay.rewind import copy_workspace, rewind
from cli_agent.session import drive, open_session
from cli_agent.tools import Registry

__all__ = ["replay"]


@dataclass
class ReplayResult:
    trace: Path
    runs: int = 0
    tool_calls: int = 0
    stop_reasons: list[str] = field(default_factory=list)
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)
    commands_run: bool = False  # --run-commands: the trace's commands ran (in the sandbox), not played back
    played_back: int = 0  # recorded commands played back instead of run

    def to_dict(self) -> dict[str, Any]:
        return {"trace": str(self.trace), "status": "divergent" if self.divergence else "identical",
                "runs": self.runs, "tool_calls": self.tool_calls, "stop_reasons": self.stop_reasons,
                "commands": {"run": self.commands_run, "played_back": self.played_back},
                "divergence": self.divergence and {"run": self.divergence.run, "step": self.divergence.step,
                                                   "message": self.divergence.message},
                "notes": self.notes}


def replay(path: Path, *sinks: Callable[[Event], None], run_commands: bool = False) -> ReplayResult:
    """Replay the trace at `path`, feeding every event of the replay to `sinks`; the trace's commands are played
    back from it unless `run_commands` (then they run in the command sandbox, on the copy)."""
    trace = read_trace(path)
    original = trace.header.get("workspace")
    if not isinstance(original, str) or not Path(original).is_dir():
        raise errors.TraceError(f"{path}: the trace's workspace {original!r} is not a folder any more; replay "
                                "starts from a copy of it")
    _refuse_broad(path, Path(original))
    result = ReplayResult(trace=path, commands_run=run_commands)
    with tempfile.TemporaryDirectory(prefix="cli-agent-replay-") as tmp:
        copy = copy_workspace(Path(original), Path(tmp))
        raw = raw_records(path)
        result.notes += rewind(copy, trace, raw)
        written_shas = written(trace, raw)
        provider = ReplayProvider(outcomes(trace))
        session = open_session(replay_settings(trace, copy, Path(tmp)), interactive=True,
                               provider_factory=lambda settings: provider, record=False)
        registry = with_recorded_tools(session.registry, trace)  # MCP tools answer from the trace
        played: set[str] = set()
        try:
            if run_commands:
                _require_sandbox(session)
            else:
                registry, played = _with_recorded_commands(registry, trace)
                result.played_back = len(played)
            session.use_registry(registry)
            before: dict[str, list[Any]] = {}  # the conversation as each recorded run found it (for a /rewind)
            for number, run in enumerate(trace.runs, 1):
                _follow_resets(session.agent, run, before)
                if not isinstance(run[0], RunStarted):  # only resets (a /clear before the first run)
                    continue
                before[run[0].run_id] = list(session.agent.history)
                compare = Comparator(number, run, written_shas, original, str(session.workspace.root), played)
                started = run[0]
                call = first_call(run) if is_tool_step(run) else None
                events: EventStream
                if call is not None:
                    events = session.agent.run_call(call, RecordedApprover(run, played))
                else:
                    prompt = started.prompt if isinstance(started, RunStarted) else ""
                    events = session.run(prompt, RecordedApprover(run, played))
                finished = drive(events, *sinks, compare)
                _follow_resets(session.agent, _after_run(run), before)
                result.runs += 1
                result.tool_calls += compare.calls
                result.stop_reasons.append(finished.stop_reason.value)
                compare.finish()
                if compare.divergence is not None:
                    result.divergence = compare.divergence
                    break
                if compare.fingerprint_differs and not any("prompt plan" in n for n in result.notes):
                    result.notes.append("the prompt plan differs from the recording's (today's config, facts, "
                                        "tool specs or files); the replies were replayed all the same")
        finally:
            session.close()
    return result


def _refuse_broad(path: Path, original: Path) -> None:
    """The trace names the folder that is copied: never the filesystem's root, your home folder or a folder above
    it (a copy of everything you have, for an edited trace to read)."""
    reason = broad_reason(original)
    if reason is not None:
        raise errors.TraceError(f"{path}: the trace's workspace {str(original)!r} is {reason}, not a project; "
                                "replay copies a project's folder: open a project folder instead")


def _require_sandbox(session: Any) -> None:
    """--run-commands: the commands of a trace run only where the command sandbox confines them."""
    commands = session.commands
    if commands is None:
        raise errors.UsageError("replay runs a trace's commands only in the command sandbox, and there is none here "
                                "(`cli-agent sandbox` says why); replay without --run-commands plays them back")
    if commands.capability is None:
        raise errors.UsageError('replay runs a trace\'s commands only in the command sandbox, and your config turns '
                                'it off (sandbox = "off"); replay without --run-commands plays them back')


def _with_recorded_commands(base: Registry, trace: Trace) -> tuple[Registry, set[str]]:
    """`base` with each command tool the trace called answering from the trace instead of running (see the module
    docstring), and the ids of those calls. Each such call asks, and the recorded answer (yes when the recording
    asked nothing) decides; those approvals are not compared, as the recording may have asked twice."""
    commands = {spec.name: spec for spec in Registry.builtin().specs() if spec.runs_command}
    calls = {call.id: call.name for event in trace.events if isinstance(event, ToolCallsProposed)
             for call in event.calls if call.name in commands}
    if not calls:
        return base, set()
    specs = [spec for spec in base.specs() if spec.name not in commands]
    handlers = {name: base.handler(name) for name in base.names() if base.has_handler(name)}
    for name in sorted(set(calls.values())):
        envelopes = [e.envelope for e in trace.events if isinstance(e, ToolResult) and e.tool == name]
        spec = base.get(name) if name in base else commands[name]
        specs.append(replace(spec, runs_command=False, mutates=False, requires_approval=True,
                             description=spec.description + " (Replayed from the trace, not run.)"))
        handlers[name] = RecordedResults(name, envelopes)
    return Registry(specs, handlers, optional_budget=base.optional_budget), set(calls)


def _follow_resets(agent: Any, events: list[Event], before: dict[str, list[Any]]) -> None:
    """Apply the /clear, /compact and /rewind, and the notes (an /undo), recorded in `events` up to a run's start:
    those before the first run, or, given a run's events after its `run_finished`, those between it and the next
    run. `before`: the conversation as each run found it, which a /rewind goes back to."""
    for event in events:
        if isinstance(event, RunStarted):
            return
        if isinstance(event, ConversationReset) and event.kind == "rewind":
            agent.clear(list(before.get(event.run_id, agent.history)))
        elif isinstance(event, ConversationReset):
            apply_reset(agent, event)
        elif isinstance(event, MessagesAppended):
            for message in event.messages:
                agent.add_note(message.content or "")


def _after_run(run: list[Event]) -> list[Event]:
    ends = [i for i, event in enumerate(run) if isinstance(event, RunFinished)]
    return run[ends[-1] + 1:] if ends else []


def is_tool_step(run: list[Event]) -> bool:
    """Whether `run` is a workflow's tool step (`Agent.run_call`): a "(tool step) NAME" run without a model request."""
    started = run[0]
    return (isinstance(started, RunStarted) and started.prompt.startswith("(tool step) ")
            and not any(isinstance(e, ModelRequest) for e in run))

"""Replay: run a recorded session again and report the first place it goes differently.

`replay(path)` reads the trace strictly (`read_trace`: an unknown format, a damaged line or a truncated trace is a
TraceError, exit 2), copies the trace's workspace into a temporary folder and rewinds the copy (`rewind`:
the trace holds the workspace's path, not its content, and the folder now holds what the runs left). Then it opens
a session on the copy whose provider plays the recorded replies back through the ScriptedProvider (a provider
error, missing key or timeout a run ended with is raised again at the same request) and whose approver gives the
recorded answers, and drives every recorded run through it. Each run's significant events (calls and their
arguments, approvals, result ok/errors, what a change wrote, read-only results' data, the stop reason and answer)
are compared with the recording's as they happen; a run the user interrupted is interrupted at the same point.

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

import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cli_agent.contracts import errors
from cli_agent.contracts.change import sha_of
from cli_agent.contracts.events import (
    ApprovalDecided,
    AssistantMessage,
    ConversationReset,
    Event,
    EventStream,
    MessagesAppended,
    ModelRequest,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCallsProposed,
    ToolResult,
)
from cli_agent.history.trace import Trace, raw_records, read_trace
from cli_agent.replay.provider import RecordedApprover, ReplayProvider, first_call, outcomes, replay_settings
from cli_agent.replay.recorded_tools import RecordedResults, with_recorded_tools
from cli_agent.replay.rewind import copy_workspace, rewind
from cli_agent.tools.registry import Registry

__all__ = ["Divergence", "ReplayResult", "replay", "run_replay"]

_ANCHORS = (ModelRequest, AssistantMessage, ToolCallsProposed, ApprovalDecided, ToolResult)
_READ_ONLY = ("list_files", "read_file", "search")
_SIGNALS: dict[StopReason, Callable[[], BaseException]] = {
    StopReason.INTERRUPTED: KeyboardInterrupt, StopReason.CANCELLED: KeyboardInterrupt,
    StopReason.TERMINATED: errors.TerminateSignal}


@dataclass(frozen=True)
class Divergence:
    run: int
    step: int
    message: str  # one line


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
    from cli_agent.session.session import drive, open_session

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
        written = _written(trace, raw)
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
            for number, run in enumerate(trace.runs, 1):
                _follow_resets(session.agent, run)
                if not isinstance(run[0], RunStarted):  # only resets (a /clear before the first run)
                    continue
                compare = _Comparator(number, run, written, original, str(session.workspace.root), played)
                started = run[0]
                call = first_call(run) if is_tool_step(run) else None
                events: EventStream
                if call is not None:
                    events = session.agent.run_call(call, RecordedApprover(run, played))
                else:
                    prompt = started.prompt if isinstance(started, RunStarted) else ""
                    events = session.run(prompt, RecordedApprover(run, played))
                finished = drive(events, *sinks, compare)
                _follow_resets(session.agent, _after_run(run))
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
    from cli_agent.fs.broad import broad_reason

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


def _follow_resets(agent: Any, events: list[Event]) -> None:
    """Apply the /clear and /compact, and the notes (an /undo), recorded in `events` up to a run's start: those
    before the first run, or, given a run's events after its `run_finished`, those between it and the next run."""
    from cli_agent.agent.compaction import apply_reset

    for event in events:
        if isinstance(event, RunStarted):
            return
        if isinstance(event, ConversationReset):
            apply_reset(agent, event)
        elif isinstance(event, MessagesAppended):
            for message in event.messages:
                agent.add_note(message.content or "")


def _after_run(run: list[Event]) -> list[Event]:
    ends = [i for i, event in enumerate(run) if isinstance(event, RunFinished)]
    return run[ends[-1] + 1:] if ends else []


def run_replay(path: Path, output: str = "text", *, run_commands: bool = False) -> int:
    """`cli-agent replay TRACE [--run-commands]`: the replayed events (text) or one JSON object, then exit 0 if the
    replay went as recorded; a divergence is a one-line CliAgentError (exit 1)."""
    import sys

    from cli_agent.contracts.escape import escape_for_terminal, json_for_output

    if output not in ("text", "json"):
        raise errors.UsageError(f"--output must be text or json for replay, not {output!r}")
    result = replay(path, *([] if output == "json" else [_print_event]), run_commands=run_commands)
    if output == "json":
        sys.stdout.write(json_for_output(result.to_dict()) + "\n")
    else:
        for note in result.notes:
            sys.stdout.write(escape_for_terminal(f"note: {note}") + "\n")
        if result.divergence is None:
            dry = (f"; {result.played_back} command(s) played back from the trace, not run (--run-commands runs "
                   "them in the sandbox)") if result.played_back else ""
            sys.stdout.write(f"replay identical: {result.runs} run(s), {result.tool_calls} tool call(s), stop "
                             f"reason(s) {', '.join(result.stop_reasons)}{dry}\n")
    sys.stdout.flush()
    if result.divergence is not None:
        hint = (f" ({result.played_back} command(s) were played back, not run, so their file changes are not in "
                "the copy: --run-commands runs them in the sandbox)") if result.played_back else ""
        raise errors.CliAgentError(f"replay diverged: {result.divergence.message}{hint}")
    return 0


def _print_event(event: Event) -> None:
    import sys

    from cli_agent.contracts.escape import escape_for_terminal

    line = None
    if isinstance(event, RunStarted):
        line = f"run: {_short(event.prompt, 100)}"
    elif isinstance(event, ToolCallsProposed):
        line = "\n".join(f"  → {c.name} {_short(c.raw_arguments or json.dumps(c.arguments))}" for c in event.calls)
    elif isinstance(event, ApprovalDecided):
        line = f"    {'approved' if event.decision.approves else 'denied'}"
    elif isinstance(event, ToolResult):
        detail = event.change.summary if event.change else "; ".join(event.envelope.errors)
        line = f"    {'✓' if event.envelope.ok else '✗'} {event.tool} {_short(detail)}".rstrip()
    elif isinstance(event, RunFinished):
        line = f"  ■ {event.stop_reason.value}: {_short(event.message)}"
        if event.answer:
            line += f"\n  {_short(event.answer, 300)}"
    if line is not None:
        sys.stdout.write(escape_for_terminal(line) + "\n")


# -- comparing ---------------------------------------------------------------------------------------------------

class _Comparator:
    """Checks one run's replayed events against the recording's, item by item; raises the recorded interruption
    at the point the recording was interrupted."""

    def __init__(self, number: int, recorded: list[Event], written: dict[int, str], original_root: str,
                 copy_root: str, played: set[str] | None = None) -> None:
        self.number = number
        self.roots = (copy_root, original_root)
        self.played = played or set()  # calls played back: their approvals are not compared
        recorded = [e for e in recorded if not self._quiet(e)]
        self.expected = [item for event in recorded for item in _items(event, written.get(id(event)))]
        self.fingerprints = [e.fingerprint for e in recorded if isinstance(e, ModelRequest)]
        finished = recorded[-1] if isinstance(recorded[-1], RunFinished) else None
        self.signal = _SIGNALS.get(finished.stop_reason) if finished is not None else None
        self.anchors = sum(isinstance(e, _ANCHORS) for e in recorded)
        self.seen = self.position = self.step = self.calls = 0
        self.divergence: Divergence | None = None
        self.fingerprint_differs = False

    def _quiet(self, event: Event) -> bool:
        return isinstance(event, ApprovalDecided) and event.call_id in self.played

    def __call__(self, event: Event) -> None:
        if self._quiet(event):
            return
        if isinstance(event, ModelRequest):
            self.step = event.step
            if self.step <= len(self.fingerprints) and event.fingerprint != self.fingerprints[self.step - 1]:
                self.fingerprint_differs = True
        if isinstance(event, ToolCallsProposed):
            self.calls += len(event.calls)
        if isinstance(event, RunFinished) and "no scripted reply left" in event.message and not self.divergence:
            self._diverge("the replay asked the model for a reply the recording does not have")
        wrote = sha_of(event.change.after) if isinstance(event, ToolResult) and event.change is not None else None
        for item in _items(self._normal(event), wrote):
            self._check(item)
        if isinstance(event, _ANCHORS):
            self.seen += 1
        if (self.signal is not None and not isinstance(event, RunStarted | RunFinished)
                and self.seen >= self.anchors):
            signal, self.signal = self.signal, None
            raise signal()

    def _normal(self, event: Event) -> Event:
        """A result as it would read in the original workspace (no temporary path in it)."""
        if not isinstance(event, ToolResult):
            return event
        text = json.dumps(event.envelope.to_dict(), ensure_ascii=False, default=str).replace(*self.roots)
        return replace(event, envelope=type(event.envelope).from_dict(json.loads(text)))

    def _check(self, got: tuple[Any, ...]) -> None:
        if self.divergence is not None:
            return
        want = self.expected[self.position] if self.position < len(self.expected) else None
        self.position += 1
        if want != got:
            theirs = _describe(want) if want is not None else "had nothing more"
            self._diverge(f"the recording {theirs}, the replay {_describe(got)}")

    def finish(self) -> None:
        if self.divergence is None and self.position < len(self.expected):
            self._diverge(f"the recording then {_describe(self.expected[self.position])}, the replay stopped")

    def _diverge(self, message: str) -> None:
        self.divergence = Divergence(self.number, self.step, f"run {self.number}, step {self.step}: {message}")


def _written(trace: Trace, raw: list[dict[str, Any]]) -> dict[int, str]:
    """The sha256 of what each recorded change wrote, by the id of its ToolResult event."""
    return {id(event): str(record["change"].get("after_sha256")) for event, record in zip(trace.events, raw,
                                                                                          strict=False)
            if isinstance(event, ToolResult) and isinstance(record.get("change"), dict)}


def _items(event: Event, wrote: str | None = None) -> list[tuple[Any, ...]]:
    if isinstance(event, ToolCallsProposed):
        calls = [("call", c.name, c.arguments if c.arguments is not None else c.raw_arguments) for c in event.calls]
        return calls + ([("terminate",)] if event.terminate else [])
    if isinstance(event, ApprovalDecided):
        return [("approval", event.decision.approves)]
    if isinstance(event, ToolResult):
        data = json.dumps(event.envelope.data, sort_keys=True, default=str) if event.tool in _READ_ONLY else None
        return [("result", event.tool, event.envelope.ok, event.envelope.errors, data, wrote)]
    if isinstance(event, RunFinished):
        return [("finished", event.stop_reason.value, event.answer)]
    return []


def _describe(item: tuple[Any, ...]) -> str:
    kind = item[0]
    if kind == "call":
        arguments = item[2] if isinstance(item[2], str) else json.dumps(item[2], ensure_ascii=False)
        return f"called {item[1]} {_short(arguments)}"
    if kind == "terminate":
        return "asked to terminate after the call"
    if kind == "approval":
        return "approved the call" if item[1] else "denied the call"
    if kind == "result":
        if item[2] and item[5]:
            return f"got {item[1]} ok, writing content with sha256 {item[5][:12]}"
        if item[2]:
            return f"got {item[1]} ok" + (f" with {_short(item[4])}" if item[4] else "")
        return f"got {item[1]} failing: {_short('; '.join(item[3]))}"
    answer = f" answering {_short(item[2])}" if item[2] else ""
    return f"finished ({item[1]}){answer}"


def _short(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_tool_step(run: list[Event]) -> bool:
    """Whether `run` is a workflow's tool step (`Agent.run_call`): a "(tool step) NAME" run without a model request."""
    started = run[0]
    return (isinstance(started, RunStarted) and started.prompt.startswith("(tool step) ")
            and not any(isinstance(e, ModelRequest) for e in run))

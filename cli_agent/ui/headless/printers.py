"""Headless front ends: what `cli-agent -p` and `cli-agent workflow run` print for `--output text`, `json` and
`stream-json`.

Each is an event sink. Results go to stdout; progress goes to stderr, and only when stderr is a terminal. The last
line on stderr (why a run failed) is printed by `cli.py`, in one place.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import field
from typing import IO, Any

from cli_agent.contracts import (
    ApprovalDecided,
    Event,
    HookRan,
    NetworkConnection,
    PlanUpdated,
    Retry,
    RunFinished,
    RunStarted,
    ToolCallsProposed,
    ToolResult,
    Usage,
    Verification,
    Warning,
    dataclass,
    escape_for_terminal,
    json_for_output,
)


@dataclass
class RunRecord:
    """What a run did, gathered from its events (the `--output json` object and the REPL's summaries)."""

    tool_calls: list[dict[str, Any]] = field(default_factory=list)
    files_changed: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    finished: RunFinished | None = None
    plan: list[dict[str, str]] | None = None  # the model's checklist as it last set it (update_plan)

    def __call__(self, event: Event) -> None:
        if isinstance(event, PlanUpdated):
            self.plan = [dict(step) for step in event.steps]
        elif isinstance(event, ToolCallsProposed):
            for call in event.calls:
                self.tool_calls.append({"id": call.id, "tool": call.name, "arguments": call.arguments,
                                        "ok": None, "approved": None})
        elif isinstance(event, ApprovalDecided):
            entry = self._entry(event.call_id)
            if entry is not None:
                entry["approved"] = event.decision.approves
                entry["decided_by"] = event.by
                if event.by == "rule":
                    entry["rule"] = event.rule
                if not event.decision.approves and event.rule:
                    entry["would_allow"] = event.rule
        elif isinstance(event, ToolResult):
            entry = self._entry(event.call_id)
            if entry is not None:
                entry["ok"] = event.envelope.ok
                if entry["approved"] is None:
                    entry["approved"] = True if event.envelope.ok or not entry.get("decided_by") else None
                if not event.envelope.ok:
                    entry["errors"] = list(event.envelope.errors)
            for change in (event.change, *event.changes):
                if change is not None and change.path not in self.files_changed:
                    self.files_changed.append(change.path)
        elif isinstance(event, Warning):
            self.warnings.append(event.message)
        elif isinstance(event, RunFinished):
            self.finished = event

    def _entry(self, call_id: str) -> dict[str, Any] | None:
        for entry in reversed(self.tool_calls):
            if entry["id"] == call_id:
                return entry
        return None


class JsonReport(RunRecord):
    """`--output json`: one object on stdout once the job is over (`end`), counting the steps and usage of every
    run (a workflow has several); `extra` is added to it (a workflow's name and arguments)."""

    def __init__(self, out: IO[str] | None = None, trace: str = "", notes: list[str] | None = None,
                 extra: dict[str, Any] | None = None) -> None:
        super().__init__()
        self.out = out or sys.stdout
        self.trace, self.notes, self.extra = trace, notes or [], extra or {}
        self.steps, self.usage = 0, Usage()

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        if isinstance(event, RunFinished):
            self.steps += event.steps
            self.usage = self.usage + event.usage

    def end(self, finished: RunFinished) -> None:
        self.out.write(json_for_output(self.report(finished)) + "\n")
        self.out.flush()

    def report(self, finished: RunFinished) -> dict[str, Any]:
        calls = [{k: v for k, v in c.items() if k != "id"} for c in self.tool_calls]
        return {"status": finished.stop_reason.value, "exit_code": finished.exit_code, "message": finished.message,
                "answer": finished.answer, "steps": self.steps, "tool_calls": calls,
                "files_changed": self.files_changed, "usage": self.usage.to_dict(), "trace": self.trace,
                "warnings": self.warnings, "notes": self.notes,
                "verified": finished.verified, "tests": finished.tests, "plan": self.plan,
                **({"attempt": finished.attempt} if finished.attempt else {}),
                **({"failed_change": finished.failed_change} if finished.failed_change else {})} | self.extra


class StreamJsonPrinter:
    """`--output stream-json`: every event as one JSON line, as it happens."""

    def __init__(self, out: IO[str] | None = None) -> None:
        self.out = out or sys.stdout

    def __call__(self, event: Event) -> None:
        self.out.write(json_for_output(event.to_dict()) + "\n")
        self.out.flush()


class TextPrinter:
    """`--output text`: the answer on stdout; one progress line per step on stderr when it is a terminal, and a line
    for each retry of a model request whatever stderr is (a server that stays away is not waited for in silence)."""

    def __init__(self, out: IO[str] | None = None, err: IO[str] | None = None, *, planning: bool = False) -> None:
        self.out = out or sys.stdout
        self.err = err or sys.stderr
        self.progress = self.err.isatty()
        self.planning = planning  # plan mode: the plan's checklist goes to stdout before the answer
        self.steps: tuple[dict[str, str], ...] = ()
        self.tally: Any = None  # what the run changed: a progress line of its own when the answer does not say it
        if self.progress:
            from cli_agent.ui.view import ChangeTally  # deferred: the terminal's views (Rich), only on a terminal

            self.tally = ChangeTally()

    def _note(self, line: str) -> None:
        if self.progress:
            self.err.write(escape_for_terminal(line) + "\n")
            self.err.flush()

    def __call__(self, event: Event) -> None:
        self._show(event)
        if self.tally is not None:
            self.tally.see(event)
            if isinstance(event, RunFinished) and (changed := self.tally.line(event)) is not None:
                self._note(changed)

    def _show(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._note(f"· {event.model or 'model'} ({event.protocol}) in {event.workspace}")
        elif isinstance(event, ToolCallsProposed):
            for call in event.calls:
                self._note(f"→ {call.name} {json.dumps(call.arguments, ensure_ascii=False)[:200]}")
        elif isinstance(event, ToolResult):
            mark = "✓" if event.envelope.ok else "✗"
            detail = (event.change.summary or event.change.path) if event.change else "; ".join(event.envelope.errors)
            data = event.envelope.data if isinstance(event.envelope.data, dict) else {}
            if "exit_code" in data and "output_bytes" in data:  # a command: exit code, output size, change set
                detail = (f"exit {data['exit_code']}{' (timed out)' if data.get('timed_out') else ''}, "
                          f"{data['output_bytes']:,} bytes of output; {data.get('changes', {}).get('summary', '')}")
            self._note(f"  {mark} {event.tool} {detail}"[:300])
        elif isinstance(event, Warning):
            self._note(f"! {event.message}")
        elif isinstance(event, Verification) and event.phase == "unverified":  # said even when not a terminal
            self.err.write(escape_for_terminal(event.line) + "\n")
            self.err.flush()
        elif isinstance(event, Retry):
            self.err.write(escape_for_terminal(f"cli-agent: retrying in {event.delay_s:.1f}s (attempt "
                                               f"{event.attempt}): {event.reason}") + "\n")
            self.err.flush()
        elif isinstance(event, Verification):
            self._note(event.line)
        elif isinstance(event, PlanUpdated):
            self.steps = tuple(event.steps)
            self._note(f"☰ {event.summary}")
        elif isinstance(event, HookRan):
            self._note(f"⚑ {event.event} hook `{event.command}`: " + _hook_outcome(event))
        elif isinstance(event, NetworkConnection):
            self._note(f"⇄ {event.line}")
        elif isinstance(event, RunFinished) and (event.answer or (self.planning and self.steps)):
            if self.planning and self.steps:
                self.out.write("Plan:\n" + "".join(f"  {n}. {escape_for_terminal(str(step.get('step', '')))}\n"
                                                    for n, step in enumerate(self.steps, 1)) + "\n")
            self.out.write(escape_for_terminal(event.answer.rstrip("\n")) + "\n")
            self.out.flush()


def _hook_outcome(event: HookRan) -> str:
    said = (event.stderr or event.stdout).strip().replace("\n", " ")[:200]
    how = "timed out" if event.timed_out else "blocked" if event.blocked else f"exit {event.exit_code}"
    return how + (f": {said}" if said else "")


def output_sink(output: str, report: JsonReport, *, planning: bool = False) -> Callable[[Event], None]:
    """The front end `--output` names: `report` for json, else the stream-json or the text printer (`planning`:
    plan mode, whose checklist is printed with the answer)."""
    if output == "json":
        return report
    return StreamJsonPrinter() if output == "stream-json" else TextPrinter(planning=planning)


def warn(lines: Sequence[str], prefix: str) -> None:
    """Each line on stderr as `cli-agent: PREFIX LINE` (e.g. the broken workflow files skipped)."""
    for line in lines:
        sys.stderr.write(f"cli-agent: {prefix}{escape_for_terminal(line)}\n")
    sys.stderr.flush()

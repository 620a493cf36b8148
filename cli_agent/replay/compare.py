"""Comparing a replayed run with its recording, as it happens: the significant items of each event (calls and
their arguments, approvals, result ok/errors, what a change wrote, read-only results' data, the stop reason and
answer), the first place they differ as a one-line `Divergence`, and the recorded interruption raised again at
the point the recording was interrupted.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from cli_agent.contracts import (
    ApprovalDecided,
    AssistantMessage,
    Event,
    ModelRequest,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCallsProposed,
    ToolResult,
    dataclass,
    errors,
    sha_of,
)
from cli_agent.history import Trace
from cli_agent.tools import Registry

__all__ = ["short"]

_ANCHORS = (ModelRequest, AssistantMessage, ToolCallsProposed, ApprovalDecided, ToolResult)
_SIGNALS: dict[StopReason, Callable[[], BaseException]] = {
    StopReason.INTERRUPTED: KeyboardInterrupt, StopReason.CANCELLED: KeyboardInterrupt,
    StopReason.TERMINATED: errors.TerminateSignal}


@dataclass(frozen=True)
class Divergence:
    run: int
    step: int
    message: str  # one line



class Comparator:
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


def written(trace: Trace, raw: list[dict[str, Any]]) -> dict[int, str]:
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
        data = json.dumps(event.envelope.data, sort_keys=True, default=str) if _finds(event.tool) else None
        return [("result", event.tool, event.envelope.ok, event.envelope.errors, data, wrote)]
    if isinstance(event, RunFinished):
        return [("finished", event.stop_reason.value, event.answer)]
    return []


def _finds(tool: str) -> bool:
    """Whether a result's data is compared: a built-in tool that reads the workspace (its spec's kind is read or
    search), whose data a faithful replay finds again; not a fetch, a plan, a sub-task or an MCP tool's."""
    builtin = Registry.builtin()
    return tool in builtin and builtin.get(tool).kind in ("read", "search")


def _describe(item: tuple[Any, ...]) -> str:
    kind = item[0]
    if kind == "call":
        arguments = item[2] if isinstance(item[2], str) else json.dumps(item[2], ensure_ascii=False)
        return f"called {item[1]} {short(arguments)}"
    if kind == "terminate":
        return "asked to terminate after the call"
    if kind == "approval":
        return "approved the call" if item[1] else "denied the call"
    if kind == "result":
        if item[2] and item[5]:
            return f"got {item[1]} ok, writing content with sha256 {item[5][:12]}"
        if item[2]:
            return f"got {item[1]} ok" + (f" with {short(item[4])}" if item[4] else "")
        return f"got {item[1]} failing: {short('; '.join(item[3]))}"
    answer = f" answering {short(item[2])}" if item[2] else ""
    return f"finished ({item[1]}){answer}"


def short(text: str, limit: int = 120) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"



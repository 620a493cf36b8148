"""The typed events of a run. The loop yields them; the REPL, the headless printer, `--output stream-json`, the
trace and the tests all consume the same stream. How a run ends (`StopReason`) and how a question is answered
(`Decision`, `Answer`) live in `outcomes` and are handed on here.

Every event is a frozen dataclass with a `type` tag and round-trips through `to_dict` / `event_from_dict`.
"""

from __future__ import annotations

import enum
import time
from collections.abc import Callable, Generator
from dataclasses import field, fields
from typing import Any, ClassVar

from cli_agent.contracts import errors
from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.messages import Message, ToolCall, Usage
from cli_agent.contracts.outcomes import Decision, StopReason
from cli_agent.contracts.records import dataclass

__all__ = [
    "ApprovalAsked", "ApprovalDecided", "AssistantMessage", "CommandOutput", "ConversationReset", "Event",
    "EventStream", "HookRan", "MessagesAppended", "ModelRequest", "NetworkConnection", "PlanUpdated", "Retry",
    "RunFinished", "RunStarted", "SubagentEvent", "TextDelta", "ThinkingDelta", "ToolCallsProposed", "ToolResult",
    "Verification", "Warning", "event_from_dict",
]


def _now() -> float:
    return round(time.time(), 3)


@dataclass(frozen=True)
class _Event:
    type: ClassVar[str]

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"type": self.type}
        for f in fields(self):
            out[f.name] = _plain(getattr(self, f.name))
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, ToolCall | Usage | Envelope | Change | Message):
        return value.to_dict()
    if isinstance(value, enum.Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    return value


@dataclass(frozen=True)
class RunStarted(_Event):
    type: ClassVar[str] = "run_started"
    run_id: str
    prompt: str
    model: str
    protocol: str
    workspace: str
    time: float = field(default_factory=_now)
    command: str = ""  # what the user typed when `prompt` is one the front end made from it (`/refactor calc.py`)


@dataclass(frozen=True)
class ModelRequest(_Event):
    type: ClassVar[str] = "model_request"
    step: int
    fingerprint: str  # sha256 of the prompt plan (system prompt, tool schemas, options)
    messages: int  # how many messages were sent
    candidate: int = 0  # the candidate that sent it (agent.judge.attempts: 2, 3, ...); 0 for the run itself


@dataclass(frozen=True)
class TextDelta(_Event):
    type: ClassVar[str] = "text_delta"
    text: str


@dataclass(frozen=True)
class ThinkingDelta(_Event):
    """A piece of a reasoning model's thinking as it streams: shown dimmed, never part of the answer."""

    type: ClassVar[str] = "thinking_delta"
    text: str


@dataclass(frozen=True)
class AssistantMessage(_Event):
    """The model's whole reply, as received: what replay feeds back through the scripted provider."""

    type: ClassVar[str] = "assistant_message"
    text: str
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str = "stop"
    usage: Usage = field(default_factory=Usage)
    candidate: int = 0  # the candidate whose request this answers; 0 for the run itself


@dataclass(frozen=True)
class ToolCallsProposed(_Event):
    type: ClassVar[str] = "tool_calls_proposed"
    calls: tuple[ToolCall, ...]
    terminate: bool = False


@dataclass(frozen=True)
class ApprovalAsked(_Event):
    type: ClassVar[str] = "approval_asked"
    call: ToolCall
    change: Change | None
    index: int  # 1-based position of the call in its turn
    total: int  # calls in the turn
    about: str = ""  # what the tool's spec says to weigh before answering (an MCP server's own hints)
    changes: tuple[Change, ...] = ()  # a command's change set (run_command), shown and approved as one
    scope: str = ""  # what "a" grants for the session instead of everything (web_fetch: the URL's host)
    always: str = ""  # the [[permissions]] rule "always" would write (TOML), "" when it is not offered


@dataclass(frozen=True)
class ApprovalDecided(_Event):
    type: ClassVar[str] = "approval_decided"
    call_id: str
    decision: Decision
    by: str  # "user", "policy" (mode or grant), "rule" (a [[permissions]] rule), "non-interactive", "protected"
    rule: str = ""  # what would have allowed a denied call (e.g. "--yes"), or which rule allowed it
    feedback: str = ""  # with Decision.FEEDBACK: what the user told the model to do instead


@dataclass(frozen=True)
class ToolResult(_Event):
    type: ClassVar[str] = "tool_result"
    call_id: str
    tool: str
    envelope: Envelope
    change: Change | None = None  # what was written, for a mutating call that ran
    model_chars: int = 0  # > 0: the result was too long, and the model got only this many characters of it
    changes: tuple[Change, ...] = ()  # what a command's approved change set wrote


@dataclass(frozen=True)
class CommandOutput(_Event):
    """Output of a running command (run_command), as it comes: for a live tail. Not part of the result. The first,
    with no text, is sent as the command starts."""

    type: ClassVar[str] = "command_output"
    call_id: str
    text: str


@dataclass(frozen=True)
class NetworkConnection(_Event):
    """A connection a running command asked the sandbox's network proxy for, allowed or refused: the host and port,
    and the rule or answer that allowed it, or why it was refused (one line)."""

    type: ClassVar[str] = "network_connection"
    call_id: str
    host: str
    port: int
    allowed: bool
    why: str

    @property
    def line(self) -> str:
        """`network: allowed pypi.org:443 (preset python)` / `network: refused x:443: ...`."""
        return (f"network: allowed {self.host}:{self.port} ({self.why})" if self.allowed
                else f"network: refused {self.why}" if self.why.startswith(f"{self.host}:")
                else f"network: refused {self.host}:{self.port}: {self.why}")


@dataclass(frozen=True)
class PlanUpdated(_Event):
    """The model's checklist as it now stands (update_plan): every step with its status, `pending`, `in_progress`
    or `completed`."""

    type: ClassVar[str] = "plan_updated"
    call_id: str
    steps: tuple[dict[str, str], ...]  # {"step": ..., "status": ...}, in order
    explanation: str = ""

    @property
    def summary(self) -> str:
        """One line: `plan: 2/5 done · now: write the tests`."""
        done = sum(1 for s in self.steps if s.get("status") == "completed")
        now = next((s.get("step", "") for s in self.steps if s.get("status") == "in_progress"), "")
        return f"plan: {done}/{len(self.steps)} done" + (f" · now: {now}" if now else "")


@dataclass(frozen=True)
class HookRan(_Event):
    """A hook of the user's config ran (`cli_agent.hooks`): on which event, for which call, with what outcome;
    `blocked`: it stopped the call (before_tool), the end of the run (stop) or the prompt (prompt)."""

    type: ClassVar[str] = "hook_ran"
    event: str  # "before_tool" | "after_tool" | "stop" | "prompt"
    command: str
    exit_code: int | None  # None: it did not finish (timed out, or could not start)
    stdout: str = ""
    stderr: str = ""
    blocked: bool = False
    timed_out: bool = False
    call_id: str = ""
    tool: str = ""


@dataclass(frozen=True)
class SubagentEvent(_Event):
    """An event of a sub-task's run (the task tool), kept under the parent's call: `event` is its `to_dict`."""

    type: ClassVar[str] = "subagent_event"
    call_id: str  # the parent's task call
    description: str
    event: dict[str, Any]


@dataclass(frozen=True)
class Warning(_Event):
    type: ClassVar[str] = "warning"
    code: str  # "step_limit", "budget", "context_elided", "truncated", "malformed_reply", ...
    message: str


@dataclass(frozen=True)
class Verification(_Event):
    """The harness runs the project's tests after a run's changes (`cli_agent.agent.judge.verify`): once when they start
    (`phase` "running"), once with the verdict ("passed", "failed", or "none" when no test ran). "unverified": a run
    that changed files ends without proof, and `summary` says why (no tests found, the tests could not run)."""

    type: ClassVar[str] = "verification"
    command: str
    round: int  # 1 for the first test run of the run, 2 after the first repair, ...
    phase: str  # "running" | "passed" | "failed" | "none" | "unverified"
    summary: str = ""  # the runner's closing line; a failing example: the example and what it gave
    examples: bool = False  # the verdict is the task's own examples' (a failing one is named in `summary`)

    @property
    def line(self) -> str:
        """One line for people: the start (`⧗ verifying: pytest -q`), then the verdict (`✓ tests pass: …`,
        `✗ mean([1, 2, 3]) == 2: gave 1.5`, `! not verified: no tests found (set test_command)`)."""
        if self.phase == "running":
            return f"⧗ verifying: {self.command}" + (f" (after repair {self.round - 1})" if self.round > 1 else "")
        if self.phase == "failed" and self.examples and self.summary:
            return f"✗ {self.summary}"
        mark = {"passed": "✓ tests pass", "failed": "✗ tests fail", "none": "· no test ran",
                "unverified": "! not verified"}.get(self.phase, self.phase)
        return f"{mark}: {self.summary}" if self.summary else mark


@dataclass(frozen=True)
class Retry(_Event):
    type: ClassVar[str] = "retry"
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True)
class MessagesAppended(_Event):
    """What a run added to the conversation, in order, exactly as the model saw it; the loop yields it just before
    `RunFinished`, so a trace holds the conversation and resuming it re-derives nothing."""

    type: ClassVar[str] = "messages_appended"
    messages: tuple[Message, ...]


@dataclass(frozen=True)
class RunFinished(_Event):
    type: ClassVar[str] = "run_finished"
    stop_reason: StopReason
    message: str  # one line: why it stopped
    answer: str = ""
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    failed_change: dict[str, Any] | None = None  # CHANGE_FAILED: {"tool", "arguments", "errors"} of that change
    verified: bool | None = None  # the project's tests passed after the run's changes (None: no proof either way)
    tests: str = ""  # the tests' summary line, when they ran; else why the changes are not verified
    attempt: int = 0  # the candidate whose change was kept, when more than one was tried (agent.judge.attempts)
    time: float = field(default_factory=_now)  # when the run ended (0.0: an older trace's, not known)

    @property
    def exit_code(self) -> int:
        return self.stop_reason.exit_code

    def error(self) -> errors.CliAgentError | None:
        """The error this run ends a one-shot process with, carrying its message (None for success)."""
        cls = self.stop_reason.error_class
        return cls(self.message) if cls is not None else None


@dataclass(frozen=True)
class ConversationReset(_Event):
    """Between runs: the conversation starts again (`clear`: from nothing; `compact`: from `summary`, which
    stands for everything before; `rewind`: from where it was before the run `run_id`, whose runs up to here are
    rewound). Resume and replay restore only what follows the last one."""

    type: ClassVar[str] = "conversation_reset"
    kind: str  # "clear" | "compact" | "rewind"
    summary: str = ""
    auto: bool = False  # made by the REPL near the context window, not asked for
    time: float = field(default_factory=_now)
    run_id: str = ""  # a rewind: the run the conversation goes back to before


Event = (RunStarted | ModelRequest | TextDelta | ThinkingDelta | AssistantMessage | ToolCallsProposed | ApprovalAsked
         | ApprovalDecided | ToolResult | CommandOutput | Warning | Verification | Retry | MessagesAppended
         | RunFinished | ConversationReset | PlanUpdated | HookRan | SubagentEvent | NetworkConnection)
# A run's events: a generator, so a front end can throw a Ctrl-C into it (`session.drive`) and the loop finishes
# the run cleanly, and can answer an `ApprovalAsked` by sending its `Decision` (`events.send(Decision.YES)`) instead
# of through a callback. A run of the loop returns its `RunFinished` (`finished = yield from agent.run(...)`).
EventStream = Generator[Event, "Decision | None", "RunFinished | None"]

_BY_TYPE: dict[str, type[_Event]] = {cls.type: cls for cls in _Event.__subclasses__()}


def _calls(value: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall.from_dict(c) for c in value)


def _changes(value: Any) -> tuple[Change, ...]:
    changes = [Change.from_dict(c) for c in value] if isinstance(value, list) else []
    return tuple(c for c in changes if c is not None) if all(changes) else ()


# How a field's plain value becomes its typed one (a field not named here is kept as it is). ModelRequest's
# `messages` is a count; MessagesAppended's a list of messages. A Change comes back as what it showed (`Recorded`),
# or None when the trace kept only its identity; a change set only when each of its changes came back.
_DECODERS: dict[str, Callable[[Any], Any]] = {
    "call": ToolCall.from_dict, "tool_calls": _calls, "calls": _calls, "usage": Usage.from_dict,
    "envelope": Envelope.from_dict, "change": Change.from_dict, "changes": _changes,
    "stop_reason": StopReason, "decision": Decision,
    "messages": lambda value: tuple(Message.from_dict(m) for m in value) if isinstance(value, list) else value,
}


def event_from_dict(data: dict[str, Any]) -> Event:
    """Rebuild an event from its `to_dict` form; raises KeyError/ValueError/TypeError on a damaged one."""
    cls = _BY_TYPE[data["type"]]
    kwargs = {f.name: _DECODERS.get(f.name, lambda value: value)(data[f.name]) for f in fields(cls) if f.name in data}
    if "time" not in data and any(f.name == "time" for f in fields(cls)):
        kwargs["time"] = 0.0  # an older trace's event: when is not known
    return cls(**kwargs)  # type: ignore[return-value]

"""What a run works with: the agent's set-up (`AgentSetup`, its `Limits`), the state of one run (`RunState`), and
the two ways a run ends without the model's say: a limit (`over_budget`) or an exception (`stop_for`, the one table
from exception to stop reason), and the task's brief that a run of memory or depth leaves out (`briefed`)."""

from __future__ import annotations

import time
from collections.abc import Callable, Collection, Generator
from dataclasses import field
from typing import TYPE_CHECKING, Any, Protocol

from cli_agent.contracts import (
    Answer,
    ApprovalAsked,
    Decision,
    Event,
    ImagePart,
    Message,
    StopReason,
    ToolCall,
    ToolResult,
    Usage,
    Warning,
    dataclass,
    errors,
)
from cli_agent.prompt import Plan

if TYPE_CHECKING:
    from cli_agent.agent.approval import Policy
    from cli_agent.agent.wire import WireProtocol
    from cli_agent.config import PermissionRule, Settings
    from cli_agent.contracts import Change, Envelope
    from cli_agent.hooks import Hooks
    from cli_agent.providers import Provider
    from cli_agent.tools import Dispatcher, Prepared, Registry

    # (run, the prepared task call, the approver, the policy now) -> the sub-task's events, then its envelope
    SubtaskRunner = Callable[["RunState", Prepared, "Approver | None", Policy],
                             Generator[Event, Decision | None, Envelope]]
    # (the rule "always" writes, "user" or "project") -> the rule as written (its origin and file); ConfigError
    RuleKeeper = Callable[[PermissionRule, str], PermissionRule]

__all__ = ["AgentSetup", "Approver", "Limits", "RunState"]

Approver = Callable[[ApprovalAsked], "Decision | Answer"]


class Planner(Protocol):
    """What the loop asks of its planner (`prompt.Planner`): a run's plan, once a run, and to plan the next runs for
    another model or another registry of tools."""

    def __call__(self, task: str, only_tools: Collection[str] | None, /) -> Plan: ...

    def switch_model(self, settings: Settings, protocol: str) -> None: ...

    def use_registry(self, registry: Registry) -> None: ...


@dataclass(frozen=True)
class Limits:
    max_steps: int = 20
    timeout_s: float = 300.0
    max_tokens_total: int | None = None
    max_cost_usd: float | None = None
    max_retries: int = 4
    retry_base_delay: float = 1.0
    tool_result_max_chars: int = 20_000
    context_window: int | None = None


@dataclass
class AgentSetup:
    provider: Provider
    protocol: WireProtocol
    dispatcher: Dispatcher
    planner: Planner
    policy: Policy
    limits: Limits = field(default_factory=Limits)
    model: str = ""
    workspace: str = ""
    sleep: Callable[[float], None] = time.sleep
    clock: Callable[[], float] = time.monotonic
    brief: Callable[[str], str | None] | None = None  # the task's files, shown with the task (prompt.task_files)
    hooks: Hooks | None = None  # the user's hooks on this session's events (cli_agent.hooks)
    subtasks: SubtaskRunner | None = None  # how a task call runs its sub-task (session.subtask)
    keep_rule: RuleKeeper | None = None  # writes the rule an "always" answer makes (None: "always" is not offered)


@dataclass
class RunState:
    """The state of one run."""

    deadline: float
    task: str = ""  # the prompt of the run
    steps: int = 0
    strikes: int = 0
    usage: Usage = field(default_factory=Usage)
    warned_budget: bool = False
    pending: dict[str, ToolCall] = field(default_factory=dict)  # calls in the history still without a result
    images: list[ImagePart] = field(default_factory=list)  # images the turn's results return, shown after them
    appended: list[Message] = field(default_factory=list)  # what this run added to the conversation
    feedback: str | None = None  # the user's words with the last denial: the turn goes on with them
    failed_change: dict[str, Any] | None = None  # the last change attempted, while it failed and none succeeded since
    repeats: dict[str, int] = field(default_factory=dict)  # each failed call's failures since the last change
    last_failure: str = ""  # the last failed call (name, arguments, errors)
    in_a_row: int = 0  # how often the last failed call failed in a row
    changed: dict[str, None] = field(default_factory=dict)  # the paths this run changed, in order
    applied: list[Change] = field(default_factory=list)  # the changes this run applied, in order
    verify_round: int = 0  # test runs so far
    tests_failed_at: int | None = None  # len(applied) when the project's tests first failed in this run
    share_deadline: float | None = None  # with more candidates: when the first attempt gives way to them
    stop_hooked: bool = False  # a stop hook already held this run back once (its next stop says so)

    def record(self, result: ToolResult) -> None:
        """Note what a tool's result wrote (`applied`, `changed`)."""
        written = [c for c in (result.change, *result.changes) if c is not None]
        self.applied.extend(written)
        self.changed.update((c.path, None) for c in written)


def stop_for(exc: BaseException, limits: Limits) -> tuple[StopReason, str]:
    """How an exception that reached the loop ends the run: its stop reason and one line. An internal error (any
    other exception) still ends the run with a message and a complete trace."""
    if isinstance(exc, KeyboardInterrupt):
        return StopReason.INTERRUPTED, "interrupted by the user (Ctrl-C)"
    if isinstance(exc, errors.TerminateSignal):
        return StopReason.TERMINATED, "terminated (SIGTERM)"
    if isinstance(exc, errors.RunTimeoutError):
        return StopReason.TIMEOUT, f"timed out after {limits.timeout_s:g} s ({exc})"
    if isinstance(exc, errors.UsageError):
        return StopReason.USAGE, str(exc)
    if isinstance(exc, errors.DeniedError):  # a prompt hook blocked the prompt
        return StopReason.DENIED, str(exc)
    if isinstance(exc, errors.CliAgentError):
        return StopReason.ERROR, str(exc)
    return StopReason.ERROR, f"internal error: {type(exc).__name__}: {exc}"


def over_budget(run: RunState, limits: Limits) -> Generator[Warning, None, str | None]:
    """Warn once a run at 80 % of a token or cost budget; when one is reached, warn and return the message the run
    stops with (STEP_LIMIT), else None."""
    checks = [("tokens", run.usage.total_tokens, limits.max_tokens_total),
              ("cost (USD)", run.usage.cost_usd, limits.max_cost_usd)]
    for what, used, cap in checks:
        if cap is None:
            continue
        if used >= cap:
            message = f"budget reached: {what} used {used:g} of {cap:g}"
            yield Warning(code="budget", message=message)
            return message
        if used >= 0.8 * cap and not run.warned_budget:
            run.warned_budget = True
            yield Warning(code="budget", message=f"80 % of the budget used: {what} {used:g} of {cap:g}")
    return None


def briefed(brief: Callable[[str], str | None] | None, prompt: str) -> Generator[Event, Any, str | None]:
    """The task's brief; none, and a warning saying why, when working through the task's text or files ran out of
    memory or depth (a MemoryError or RecursionError there costs the brief, never the run)."""
    if brief is None:
        return None
    try:
        return brief(prompt)
    except (MemoryError, RecursionError) as exc:
        yield Warning(code="brief", message=f"the task's files and map were left out ({type(exc).__name__} while "
                                            "working through them)")
        return None

"""How a run ends and how an approval question is answered: the stop reason (with the one table from it to the
error class, whose exit code the process ends with), the decision, and an answer with words for the model. The
events of `events` carry them."""

from __future__ import annotations

import enum

from cli_agent.contracts import errors
from cli_agent.contracts.records import dataclass

__all__ = ["Answer", "Decision", "StopReason"]


class StopReason(enum.StrEnum):
    """Why a run ended; `error_class` is the error a one-shot run ends with, whose exit code it returns."""

    DONE = "done"  # a plain answer, or a tool call with terminate: true
    ERROR = "error"  # provider unreachable after retries, internal error
    USAGE = "usage"  # bad configuration found during the run (e.g. a missing key)
    DENIED = "denied"  # a change was denied
    STEP_LIMIT = "step_limit"
    TIMEOUT = "timeout"
    UNUSABLE = "unusable"  # three malformed replies in a row
    CANCELLED = "cancelled"  # the REPL user pressed Ctrl-C during a turn
    INTERRUPTED = "interrupted"  # SIGINT in a one-shot run
    TERMINATED = "terminated"  # SIGTERM
    CHANGE_FAILED = "change_failed"  # the run ended right after a change that failed, with none applied after it
    TESTS_FAILED = "tests_failed"  # the model said done, but the project's tests fail after its change
    UNVERIFIED = "unverified"  # proof was required (`verify = "required"`), and the run's changes have none

    @property
    def error_class(self) -> type[errors.CliAgentError] | None:
        """The error a run that stopped this way ends the process with (None: success)."""
        return _ERRORS[self]

    @property
    def exit_code(self) -> int:
        cls = _ERRORS[self]
        return cls.exit_code if cls is not None else 0


# The one table from stop reason to error class; the class carries the exit code (errors.py draws them all).
_ERRORS: dict[StopReason, type[errors.CliAgentError] | None] = {
    StopReason.DONE: None, StopReason.ERROR: errors.CliAgentError, StopReason.USAGE: errors.UsageError,
    StopReason.DENIED: errors.DeniedError, StopReason.STEP_LIMIT: errors.StepLimitError,
    StopReason.TIMEOUT: errors.RunTimeoutError, StopReason.UNUSABLE: errors.UnusableOutputError,
    StopReason.CANCELLED: errors.Interrupted, StopReason.INTERRUPTED: errors.Interrupted,
    StopReason.TERMINATED: errors.Terminated, StopReason.CHANGE_FAILED: errors.ChangeFailedError,
    StopReason.TESTS_FAILED: errors.TestsFailedError, StopReason.UNVERIFIED: errors.UnverifiedError,
}


class Decision(enum.StrEnum):
    """The answer to an approval question."""

    YES = "yes"  # this call
    NO = "no"  # deny; the turn ends and no later call of it runs
    ALL = "all"  # this call, the rest of the turn, and every later change this session
    TOOL = "tool"  # this call and every later call of the same tool this session
    QUIT = "quit"  # abort the turn (a denial too)
    FEEDBACK = "feedback"  # deny this call and tell the model what to do instead; the turn goes on
    ALWAYS = "always"  # this call, and a [[permissions]] rule that allows the like of it from now on ("always")

    @property
    def approves(self) -> bool:
        return self in (Decision.YES, Decision.ALL, Decision.TOOL, Decision.ALWAYS)


@dataclass(frozen=True)
class Answer:
    """An approver's answer with words for the model: `Answer(Decision.FEEDBACK, "use pathlib instead")`. An
    approver may return a plain `Decision` or an `Answer`."""

    decision: Decision
    feedback: str = ""
    where: str = ""  # with Decision.ALWAYS: where the rule is written, "user" (config) or "project" (own rules)

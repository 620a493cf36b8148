"""What the judge works with: what the session gives it (`Judging`: the project's tests, why there are none, whether
proof is required, more candidates, whether a rewrite may be tried) and what it borrows of the agent it judges
(`Bench`: the agent's setup, its conversation and its approvals)."""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from cli_agent.contracts import dataclass

if TYPE_CHECKING:
    from cli_agent.agent.approval_flow import Approvals
    from cli_agent.agent.conversation import Conversation
    from cli_agent.agent.judge.attempts import Attempts
    from cli_agent.agent.judge.verify import Verifier
    from cli_agent.agent.run_state import AgentSetup

__all__ = ["Judging"]


@dataclass(frozen=True)
class Judging:
    """How a session's runs are judged; the default judges nothing (a run's changes end "not verified")."""

    verifier: Verifier | None = None  # the project's tests, run after a run's changes (`verify`)
    unverified: str = ""  # with no verifier: why a run's changes are not verified (`verify = false`, no sandbox)
    require_verified: bool = False  # `verify = "required"`: a run whose changes have no proof ends UNVERIFIED (exit 9)
    attempts: Attempts | None = None  # more candidates when the tests still fail (`attempts`)
    task_files: bool = True  # the task's definitions found first (off: no whole-definition candidates, `rewrite`)


@dataclass
class Bench:
    """The judge's bench: the agent's setup (read when asked: its dispatcher changes with the tools), its
    conversation and approvals, and the session's `Judging`."""

    setup: AgentSetup
    talk: Conversation
    approvals: Approvals
    judging: Judging = field(default_factory=Judging)

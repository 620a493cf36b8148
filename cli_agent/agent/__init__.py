"""The agent loop and what it stands on. `loop` is the readable core: a generator of typed events that never prints.
Around it, one module a job: what a run works with and how it stops (`run_state`), one model request with its
retries (`model_call`), the wire protocols (`wire`: native tool calls or strict JSON), the approval round trip
(`approval_flow`, over `approval`: approval as data), the conversation and the one place that changes it
(`conversation`), fitting the context window (`context_window`), stuck-call detection (`repeats`), and starting
the conversation again (`compaction`). Between those and the loop stands `judge/`: the project's tests as the judge
of "done", repair rounds and more candidates, behind one `Judge` the loop builds once.

May import: prompt, tools and everything below them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.agent.approval import ApprovalMode, Policy, Verdict, assess
    from cli_agent.agent.approval_flow import facts_of
    from cli_agent.agent.compaction import AUTO_COMPACT_AT, apply_reset, compact_prompt
    from cli_agent.agent.judge.attempts import Attempts, CandidateRun
    from cli_agent.agent.judge.bench import Judging
    from cli_agent.agent.judge.verify import verification_for
    from cli_agent.agent.loop import Agent
    from cli_agent.agent.run_state import AgentSetup, Approver, Limits, RunState
    from cli_agent.agent.wire import protocol_for

__all__ = [
    "AUTO_COMPACT_AT",
    "Agent",
    "AgentSetup",
    "ApprovalMode",
    "Approver",
    "Attempts",
    "CandidateRun",
    "Judging",
    "Limits",
    "Policy",
    "RunState",
    "Verdict",
    "apply_reset",
    "assess",
    "compact_prompt",
    "facts_of",
    "protocol_for",
    "verification_for",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("ApprovalMode", "Policy", "Verdict", "assess"):
        from cli_agent.agent import approval

        return getattr(approval, name)
    if name in ("facts_of",):
        from cli_agent.agent import approval_flow

        return getattr(approval_flow, name)
    if name in ("AUTO_COMPACT_AT", "apply_reset", "compact_prompt"):
        from cli_agent.agent import compaction

        return getattr(compaction, name)
    if name in ("Attempts", "CandidateRun"):
        from cli_agent.agent.judge import attempts

        return getattr(attempts, name)
    if name in ("Judging",):
        from cli_agent.agent.judge import bench

        return getattr(bench, name)
    if name in ("verification_for",):
        from cli_agent.agent.judge import verify

        return getattr(verify, name)
    if name in ("Agent",):
        from cli_agent.agent import loop

        return getattr(loop, name)
    if name in ("AgentSetup", "Approver", "Limits", "RunState"):
        from cli_agent.agent import run_state

        return getattr(run_state, name)
    if name in ("protocol_for",):
        from cli_agent.agent import wire

        return getattr(wire, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

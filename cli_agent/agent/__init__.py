"""The agent loop and what it stands on. `loop` is the readable core: a generator of typed events that never prints.
Around it, one module a job: what a run works with and how it stops (`run_state`), one model request with its
retries (`model_call`), the wire protocols (`wire`: native tool calls or strict JSON), the approval round trip
(`approval_flow`, over `approval`: approval as data), the conversation and the one place that changes it
(`conversation`), fitting the context window (`context_window`), stuck-call detection (`repeats`), and starting
the conversation again (`compaction`). Between those and the loop stands `judge/`: the project's tests as the judge
of "done", repair rounds and more candidates, behind one `Judge` the loop builds once.

May import: prompt, tools and everything below them.
"""

from cli_agent.agent.approval import *
from cli_agent.agent.approval_flow import *
from cli_agent.agent.compaction import *
from cli_agent.agent.judge.attempts import *
from cli_agent.agent.judge.bench import *
from cli_agent.agent.judge.verify import *
from cli_agent.agent.loop import *
from cli_agent.agent.run_state import *
from cli_agent.agent.wire import *

__all__ = [
    "Agent", "AgentSetup", "ApprovalMode", "Approver", "Attempts", "CandidateRun", "Judging",
    "Limits", "Policy", "RunState", "Verdict", "apply_reset", "assess", "carried_over", "compact_prompt", "facts_of",
    "protocol_for", "verification_for",
]

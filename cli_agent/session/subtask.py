"""How the task tool runs a sub-task: a helper agent in a conversation of its own, on the parent's provider, tools
and approval, within what is left of the parent run's budgets, returning its final answer.

The helper gets the read-only tools (those that change nothing and ask nothing) unless the call names an agent
type of the config (`[agents.NAME]`), whose `tools` it gets instead; its writes are asked for as the parent's are.
It never gets the task tool (no helper of a helper) or update_plan (the plan is the parent's). Its events reach
the front end as `SubagentEvent`s under the parent's call (the trace keeps them there; the REPL folds them), but
its approval questions are asked as they are, and answered as the parent's. The steps, tokens and cost it used
count for the parent run; it ends at the parent's deadline.
"""

from __future__ import annotations

from collections.abc import Callable, Generator
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cli_agent.agent import Agent
from cli_agent.contracts import (
    ApprovalAsked,
    Decision,
    Envelope,
    Event,
    RunFinished,
    StopReason,
    SubagentEvent,
    ToolResult,
)
from cli_agent.hooks import Hooks

if TYPE_CHECKING:
    from cli_agent.agent import AgentSetup, Approver, Judging, Policy, RunState
    from cli_agent.config import Settings
    from cli_agent.tools import Prepared

_NEVER = ("task", "update_plan")


def helper_tools(setup: AgentSetup) -> list[str]:
    """The default helper's tools: those offered that change nothing and ask nothing."""
    return [spec.name for spec in setup.dispatcher.registry.specs()
            if spec.name in setup.dispatcher.allowed and spec.exposed_to_model and not spec.optional
            and not spec.mutates and not spec.requires_approval and spec.name not in _NEVER]


class Subtasks:
    """The session's task runner (`AgentSetup.subtasks`): `parent` is the very set-up the session's agent holds,
    so a model switched mid-session is the helper's model too."""

    def __init__(self, settings: Settings, parent: AgentSetup, judging: Judging | None = None) -> None:
        self.settings = settings
        self.parent = parent
        self.judging = judging  # the parent's; a helper's changes are not tested, and it has no other candidates

    def __call__(self, run: RunState, prepared: Prepared, approve: Approver | None,
                 policy: Policy) -> Generator[Event, Decision | None, Envelope]:
        """Run the task call `prepared` under the parent's current approval `policy` (its grants too)."""
        args = prepared.arguments
        description, prompt = str(args.get("description", "")), str(args.get("prompt", ""))
        tools, instructions = self._kind(args.get("agent"))
        if isinstance(tools, Envelope):
            return tools
        limits, why_not = self._left(run)
        if why_not:
            return Envelope.failure(f"the sub-task was not started: {why_not}")
        hooks = self.parent.hooks
        if hooks is not None:  # its tool calls are hooked as the parent's; its prompt and its end are not the user's

            hooks = Hooks([h for h in hooks.hooks if h.event in ("before_tool", "after_tool")], hooks.root, hooks.box)
        judging = replace(self.judging, verifier=None, attempts=None) if self.judging is not None else None
        helper = Agent(replace(self.parent, limits=limits, policy=policy, brief=None, subtasks=None, hooks=hooks),
                       judging)
        task = f"{instructions}\n\n{prompt}" if instructions else prompt
        finished = yield from _nested(helper.run(task, approve, only_tools=tools), run, prepared.call.id,
                                      description, self.parent.clock)
        run.steps += finished.steps
        run.usage = run.usage + finished.usage
        data = {"description": description, "answer": finished.answer, "steps": finished.steps,
                "stop_reason": finished.stop_reason.value}
        if finished.stop_reason is StopReason.DONE:
            return Envelope.success(data)
        return Envelope.failure(f"the sub-task stopped before it finished: {finished.message}", data=data)

    def _kind(self, name: Any) -> tuple[list[str] | Envelope, str]:
        """The helper's tools and instructions: the agent type's, or the read-only default."""
        if not name:
            return helper_tools(self.parent), ""
        kind = self.settings.agents.get(str(name))
        if kind is None:
            known = ", ".join(sorted(self.settings.agents)) or "none are configured"
            return Envelope.failure(f"unknown agent type {name!r} (agent types: {known}); leave agent out for a "
                                    f"read-only helper"), ""
        offered = set(self.parent.dispatcher.allowed)
        tools = [t for t in kind.tools if t in offered and t not in _NEVER]
        return tools or helper_tools(self.parent), kind.instructions

    def _left(self, run: RunState) -> tuple[Any, str]:
        """The helper's limits: what is left of the parent run's; or why nothing is."""
        limits = self.parent.limits
        steps = limits.max_steps - run.steps
        seconds = run.deadline - self.parent.clock()
        tokens = None if limits.max_tokens_total is None else limits.max_tokens_total - run.usage.total_tokens
        cost = None if limits.max_cost_usd is None else limits.max_cost_usd - run.usage.cost_usd
        if steps < 1:
            return limits, "no model requests are left in this run's step limit"
        if seconds <= 1:
            return limits, "the run's time is up"
        if (tokens is not None and tokens <= 0) or (cost is not None and cost <= 0):
            return limits, "the run's token or cost budget is spent"
        return replace(limits, max_steps=steps, timeout_s=seconds, max_tokens_total=tokens, max_cost_usd=cost), ""


def _nested(events: Generator[Event, Decision | None, RunFinished], run: RunState, call_id: str,
            description: str, clock: Callable[[], float]) -> Generator[Event, Decision | None, RunFinished]:
    """The helper's events under the parent's call; its approval questions as they are (their answers sent back,
    the time a person took to answer not counted against the parent run); a Ctrl-C thrown in finishes the
    helper's run cleanly first. What it wrote counts as the parent run's."""
    send: Decision | None = None
    throw: BaseException | None = None
    while True:
        try:
            event = events.throw(throw) if throw is not None else events.send(send) if send is not None \
                else next(events)
        except StopIteration as stop:
            return stop.value
        send, throw = None, None
        if isinstance(event, ToolResult):
            run.record(event)
        try:
            if isinstance(event, ApprovalAsked):
                waited_from = clock()
                send = yield event
                run.deadline += clock() - waited_from
            else:
                yield SubagentEvent(call_id=call_id, description=description, event=event.to_dict())
        except GeneratorExit:
            events.close()
            raise
        except BaseException as exc:  # an interrupt: the helper's run ends it properly
            throw = exc

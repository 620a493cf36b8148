"""The approval round trip of one call: the policy settles it (`approval.assess`), or the question goes to the
front end (the `ApprovalAsked` event, answered by a sent `Decision` or the injected approver). A command is asked
about first, then run in the sandbox (its output streamed as `CommandOutput`), then its change set is asked about.
"Yes to all" and "yes to this tool" widen the policy for the rest of the session. Then `execute` runs the call:
a sub-task (the task tool) through the injected `subtasks` runner, any other tool through the dispatcher; a plan
the call set is shown (`PlanUpdated`); the user's `before_tool` and `after_tool` hooks (`hooks`) run around it."""

from __future__ import annotations

import codecs
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING

from cli_agent.agent.approval import ApprovalMode, CallFacts, Policy, Verdict, assess
from cli_agent.agent.net_watch import asking, net_of, watch
from cli_agent.config import Subject, rule_toml, suggested_rule
from cli_agent.contracts import (
    Answer,
    ApprovalAsked,
    ApprovalDecided,
    CommandOutput,
    ConfigError,
    Decision,
    Envelope,
    Event,
    Message,
    PlanUpdated,
    RunFinished,
)
from cli_agent.tools import host_of

if TYPE_CHECKING:
    from collections.abc import Callable, Collection, Sequence

    from cli_agent.agent.conversation import Conversation
    from cli_agent.agent.run_state import Approver, RuleKeeper, RunState, SubtaskRunner
    from cli_agent.contracts import ToolCall
    from cli_agent.hooks import Hooks
    from cli_agent.tools import Dispatcher, Prepared, Registry

__all__ = ["facts_of"]


class RuleDenial(str):
    """A call a [[permissions]] rule denies: the model is told why, as the call's result, and the run goes on."""

PLAN_NOTE = ("(Plan mode: nothing may change yet. Read what you need with the read-only tools, then set the plan "
             "with update_plan, its steps in order, and end with your answer: the plan, what each step changes and "
             "why. The user approves it before any change is made.)")
OUTPUT_EVERY_S = 0.2  # at most five CommandOutput events a second
OUTPUT_TAIL = 4096  # each one the latest characters


def places_of(calls: Sequence[ToolCall], registry: Registry) -> dict[str, tuple[int, int]]:
    """Each call's (number, count) among the turn's calls that get a panel of their own: a plan update is drawn as
    its checklist, so an edit after it is the turn's first call, not its second."""
    shown = [c.id for c in calls if not (c.name in registry and registry.get(c.name).updates_plan)]
    return {call_id: (n, len(shown)) for n, call_id in enumerate(shown, 1)}


def facts_of(prepared: Prepared) -> CallFacts:
    """What the policy weighs about a prepared call: its tool, whether it needs approval, what it would do, and what
    an "a" answer grants (its spec's `approval_scope`: the host of a URL)."""
    scope = ""
    spec, args = prepared.spec, prepared.arguments
    if spec is not None and spec.approval_scope == "host":
        scope = host_of(str(args.get("url", "")))
    command = str(args.get("command", "")) if spec is not None and spec.runs_command else None
    paths = tuple(dict.fromkeys(c.path for c in prepared.changes)) or (
        (str(args["path"]),) if isinstance(args.get("path"), str) and command is None else ())
    host = host_of(str(args["url"])) if isinstance(args.get("url"), str) else None
    subject = Subject(prepared.call.name, command=command, paths=paths, host=host or None)
    return CallFacts(prepared.call.name, prepared.needs_approval, prepared.approval_kind, scope, subject)


class Approvals:
    """The session's approval policy, and the round trip that applies it to a call."""

    def __init__(self, policy: Policy, clock: Callable[[], float], hooks: Hooks | None = None,
                 subtasks: SubtaskRunner | None = None, keep_rule: RuleKeeper | None = None) -> None:
        self.policy = policy
        self._clock = clock
        self.hooks = hooks
        self.subtasks = subtasks
        self.keep_rule = keep_rule

    @property
    def hooked(self) -> bool:
        """Tool calls have hooks around them: each runs on its own, in order (no read-ahead)."""
        return self.hooks is not None and self.hooks.on_tools

    def prompted(self, run: RunState, prompt: str) -> Generator[Event, Decision | None, str]:
        """What plan mode and the prompt hooks add to the user's prompt; raises `PromptBlocked` when a hook blocks
        it."""
        planning = PLAN_NOTE if self.policy.mode is ApprovalMode.PLAN else ""
        if self.hooks is None:
            return planning
        said = yield from self.hooks.prompt(prompt, run.deadline)
        return "\n\n".join(filter(None, (planning, said)))

    def scoped(self, dispatcher: Dispatcher, only: Collection[str] | None) -> tuple[Dispatcher, Collection[str] | None]:
        """The run's tools: `only` (a workflow step's), and in plan mode none that changes anything (no edit, no
        command, no sub-task)."""
        if self.policy.mode is ApprovalMode.PLAN:
            specs = {s.name: s for s in dispatcher.registry.specs()}
            reads = [n for n in dispatcher.allowed if n in specs and not specs[n].mutates and not specs[n].runs_agent]
            only = [name for name in reads if only is None or name in only]
        return (dispatcher if only is None else dispatcher.only(only)), only

    def stop_held(self, run: RunState, ended: RunFinished,
                  talk: Conversation) -> Generator[Event, Decision | None, bool]:
        """Whether a stop hook holds the run back from ending (exit 2): then its words go to the model as the
        user's, and the run goes on."""
        if self.hooks is None:
            return False
        said = yield from self.hooks.stop(ended.stop_reason.value, ended.answer, run.stop_hooked, run.deadline)
        if said is None:
            return False
        run.stop_hooked = True
        talk.append(run, Message("user", f"(A stop hook of the user's config says, before you finish:)\n{said}"))
        return True

    def execute(self, run: RunState, prepared: Prepared, dispatcher: Dispatcher,
                approve: Approver | None) -> Generator[Event, Decision | None, Envelope]:
        """Run a call that may run: a sub-task in a conversation of its own, or the tool; show the plan it set; run
        the after_tool hooks on its result."""
        spec = prepared.spec
        if prepared.error is None and spec is not None and spec.runs_agent and self.subtasks is not None:
            envelope = yield from self.subtasks(run, prepared, approve, self.policy)
        else:
            envelope = dispatcher.execute(prepared)
        if envelope.ok and spec is not None and spec.updates_plan and isinstance(envelope.data, dict):
            yield PlanUpdated(call_id=prepared.call.id, steps=tuple(envelope.data.get("plan", ())),
                              explanation=str(envelope.data.get("explanation", "")))
        if self.hooks is not None and spec is not None and prepared.error is None:  # it ran (not refused, blocked)
            envelope = yield from self.hooks.after_tool(prepared.call, envelope, run.deadline)
        return envelope

    def settle(self, run: RunState, prepared: Prepared, index: int, total: int, approve: Approver | None,
               dispatcher: Dispatcher) -> Generator[Event, Decision | None, tuple[Prepared, str | None]]:
        """Approval for one call: the call (for a command, whether it may run; then it runs, in the sandbox) and
        then its changes. Returns the call as prepared and None, or the one-line reason it was denied."""
        if prepared.error is not None or prepared.spec is None:
            return prepared, None
        if self.hooks is not None:
            blocked = yield from self.hooks.before_tool(prepared.call, run.deadline)
            if blocked is not None:  # the model gets the hook's reason as the call's result
                return replace(prepared, error=Envelope.failure(blocked), blocked=True), None
        if prepared.deferred:
            reason = yield from self._decide(run, prepared, index, total, approve)
            if isinstance(reason, RuleDenial):
                return replace(prepared, error=Envelope.failure(reason), blocked=True), None
            if reason is not None:
                return prepared, reason
            prepared = yield from self._stage(prepared, dispatcher.at(run.deadline), run, approve)
            if prepared.error is not None:
                return prepared, None
        reason = yield from self._decide(run, prepared, index, total, approve)
        if isinstance(reason, RuleDenial):
            return replace(prepared, change=None, staged=None, blocked=True,
                           error=Envelope.failure(reason + prepared.denial_note())), None
        return prepared, None if reason is None else reason + prepared.denial_note()

    def _stage(self, prepared: Prepared, dispatcher: Dispatcher, run: RunState,
               approve: Approver | None) -> Generator[Event, Decision | None, Prepared]:
        """Run a command; its output becomes CommandOutput events, at most five a second (the latest 4 KiB), after
        an empty one that says it has started; its connections through the network proxy become events, and a
        host no rule allows is asked about (`net_watch`)."""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        yield CommandOutput(call_id=prepared.call.id, text="")
        net = net_of(dispatcher)
        running = dispatcher.stage(prepared)
        pending, last = "", self._clock()
        try:
            with asking(net, self.policy.interactive):
                while True:
                    try:
                        chunk = next(running)
                    except StopIteration as done:
                        staged: Prepared = done.value
                        break
                    yield from watch(net, run, prepared.call, approve)
                    pending = (pending + decoder.decode(chunk))[-OUTPUT_TAIL:]
                    if pending and self._clock() - last >= OUTPUT_EVERY_S:
                        yield CommandOutput(call_id=prepared.call.id, text=pending)
                        pending, last = "", self._clock()
        finally:
            running.close()  # an interrupt thrown in at a yield still kills the command
        if pending:
            yield CommandOutput(call_id=prepared.call.id, text=pending)
        yield from watch(net, run, prepared.call, approve)
        return staged

    def _decide(self, run: RunState, prepared: Prepared, index: int, total: int,
                approve: Approver | None) -> Generator[Event, Decision | None, str | None]:
        """Settle approval for one call; returns None when it may run, else the one-line reason it may not."""
        spec = prepared.spec
        assert spec is not None
        facts = facts_of(prepared)
        always = rule_toml(suggested_rule(facts.subject)) if self.keep_rule and facts.subject else ""
        asked = ApprovalAsked(call=prepared.call, change=prepared.change, index=index, total=total,
                              about=spec.approval_note, scope=facts.scope, always=always,
                              changes=prepared.staged.changes if prepared.staged is not None else ())
        return (yield from self.ask(run, facts, asked, approve))

    def ask(self, run: RunState, facts: CallFacts, asked: ApprovalAsked,
            approve: Approver | None) -> Generator[Event, Decision | None, str | None]:
        """The policy's answer for a call, else the user's (`asked`); None when it may go ahead, else why not."""
        call = asked.call
        assessment = assess(facts, self.policy)
        ruled = assessment.by_rule is not None
        if assessment.verdict is Verdict.ALLOW:
            if facts.requires_approval or ruled:
                yield ApprovalDecided(call_id=call.id, decision=Decision.YES, by="rule" if ruled else "policy",
                                      rule=assessment.rule)
            return None
        if assessment.verdict is Verdict.DENY:
            yield ApprovalDecided(call_id=call.id, decision=Decision.NO, by="rule" if ruled else "non-interactive",
                                  rule=assessment.rule)
            if ruled:
                return RuleDenial(f"{call.name} was {assessment.rule}")
            return (f"{call.name} needs approval and no one can be asked (not a terminal); "
                    f"re-run with {assessment.rule} to allow it")
        waited_from = self._clock()
        sent = yield asked
        answer = sent if isinstance(sent, Decision | Answer) else approve(asked) if approve is not None else Decision.NO
        run.deadline += self._clock() - waited_from  # the time a person takes to answer is not the run's
        decision, feedback = (answer.decision, answer.feedback) if isinstance(answer, Answer) else (answer, "")
        if decision is Decision.FEEDBACK and not feedback.strip():
            decision = Decision.NO  # no words for the model: a plain no
        kept = self._always(facts, answer.where if isinstance(answer, Answer) else "") \
            if decision is Decision.ALWAYS else ""
        yield ApprovalDecided(call_id=call.id, decision=decision, by="user", feedback=feedback.strip(), rule=kept)
        if decision is Decision.FEEDBACK:
            run.feedback = feedback.strip()
        # "a" for a web page, or ACP's "allow always": its site, neither everything nor the tool on every site
        if decision in (Decision.ALL, Decision.TOOL) and facts.scope:
            self.policy = self.policy.grant_scope(call.name, facts.scope)
        elif decision is Decision.ALL:
            self.policy = self.policy.grant_all()
        elif decision is Decision.TOOL:
            self.policy = self.policy.grant_tool(call.name)
        if decision.approves:
            return None
        return f"{call.name} was denied by the user" + (" (turn aborted)" if decision is Decision.QUIT else "")

    def _always(self, facts: CallFacts, where: str) -> str:
        """An "always" answer: the rule that allows the like of this call is written (`where`: "user" config or
        the user's own rules for the "project") and holds from now on in this session too; what was written."""
        rule = suggested_rule(facts.subject or Subject(facts.tool))
        if self.keep_rule is None:
            self.policy = self.policy.with_rule(replace(rule, origin="this session"))
            return f"rule {rule.label} kept for this session only"
        try:
            rule = self.keep_rule(rule, where or "project")
        except ConfigError as exc:
            self.policy = self.policy.with_rule(replace(rule, origin="this session"))
            return f"rule {rule.label} kept for this session only: {exc}"
        self.policy = self.policy.with_rule(rule)
        return f"rule {rule.label} written to {rule.origin} ({rule.file})"

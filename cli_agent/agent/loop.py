"""The agent loop: a model works on the workspace through the tools until it answers, terminates, is denied, or
hits a limit.

`Agent.run(prompt, approve)` is a generator of typed events (`contracts.events`); it never prints, prompts or reads
the terminal. Approval is the injected `approve` callback, asked only for calls the policy cannot settle. One
`Agent` is one session: the conversation persists across runs (REPL turns). Every run ends with exactly one
`RunFinished` whose stop reason carries the exit code, preceded by one `MessagesAppended`: every message the run
added to the conversation, as the model saw it (what a resumed session gets back). Between runs only `add_note`
and `clear` change it. Beside the loop: `model_call` (retries), `context_window`, `approval_flow`, `repeats` (stuck
calls), `judge/` (the tests after a change, behind one `Judge`), `conversation` and `run_state` (set-up, state, limits).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Collection, Generator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING

from cli_agent.agent import repeats
from cli_agent.agent.approval_flow import Approvals, places_of
from cli_agent.agent.context_window import for_model
from cli_agent.agent.conversation import Conversation
from cli_agent.agent.judge.bench import Judging
from cli_agent.agent.judge.judge import Judge
from cli_agent.agent.model_call import complete, share_spent
from cli_agent.agent.run_state import AgentSetup, Approver, RunState, briefed, over_budget, stop_for
from cli_agent.agent.wire import protocol_for
from cli_agent.contracts import (
    Decision,
    Envelope,
    Event,
    ImagePart,
    Message,
    MessagesAppended,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCall,
    ToolCallsProposed,
    Usage,
    Warning,
    errors,
)
from cli_agent.tools import Dispatcher

if TYPE_CHECKING:
    from cli_agent.agent.approval import ApprovalMode, Policy
    from cli_agent.agent.wire import Parsed
    from cli_agent.config import Settings
    from cli_agent.prompt import Plan
    from cli_agent.providers import Provider, ProviderReply
    from cli_agent.tools import Dispatcher, Registry

__all__ = ["Agent"]

MAX_STRIKES = 3  # consecutive unusable replies before the run ends (exit 6)

Events = Generator[Event, Decision | None, RunFinished]


class Agent:
    def __init__(self, setup: AgentSetup, judging: Judging | None = None) -> None:
        self._setup = setup
        self._approvals = Approvals(setup.policy, setup.clock, setup.hooks, setup.subtasks, setup.keep_rule)
        self._talk = Conversation(setup.protocol)
        self._judge = Judge(setup, self._talk, self._approvals, judging or Judging())
        self.usage = Usage()

    @property
    def history(self) -> list[Message]:  # to read: only the agent changes it (its runs, and the methods below)
        return self._talk.messages

    @property
    def policy(self) -> Policy:
        """The approval policy, as widened by the user's answers ("yes to all", "yes to this tool")."""
        return self._approvals.policy

    def context_use(self) -> tuple[int, int | None]:
        """(estimated tokens the next request carries, the context window or None until the first request)."""
        return self._talk.window.use(self.history)

    def add_note(self, text: str) -> MessagesAppended:
        """Between runs, a note from the user's side joins the conversation; the event is for the trace."""
        return self._talk.note(text)

    def clear(self, messages: Sequence[Message] = ()) -> None:
        """A new conversation (from `messages`); the files the old one read count as unread."""
        self._talk.start(messages)
        if self._setup.dispatcher.ctx.seen is not None:
            self._setup.dispatcher.ctx.seen.clear()

    def set_mode(self, mode: ApprovalMode, *, keep_grants: bool = True) -> None:
        """Another approval mode; `keep_grants=False` also forgets the tools approved for the session."""
        policy = self._approvals.policy.with_mode(mode)
        self._approvals.policy = policy if keep_grants else replace(policy, granted_tools=frozenset())

    def grant_tool(self, tool: str) -> None:
        """Approve every call of `tool` for the rest of the session (the answer "yes to this tool")."""
        self._approvals.policy = self._approvals.policy.grant_tool(tool)

    def switch_model(self, provider: Provider, model: str, protocol: str, settings: Settings) -> None:
        """Send the next requests to `provider` (`model`, speaking `protocol`), planned with `settings`."""
        s = self._setup
        s.provider, s.model, s.protocol = provider, model, protocol_for(protocol)
        self._talk.protocol = s.protocol
        s.planner.switch_model(settings, protocol)

    def use_registry(self, registry: Registry) -> None:
        """Offer and dispatch the tools of `registry` from the next run on (the built-ins grown by MCP tools)."""
        s = self._setup
        exposed = [spec.name for spec in registry.specs() if spec.exposed_to_model]
        s.dispatcher = Dispatcher(registry, s.dispatcher.ctx, allowed=exposed)
        s.planner.use_registry(registry)

    def plan(self, task: str) -> Plan:
        """The prompt plan a run of `task` would send (`/prompt`)."""
        return self._setup.planner(task, None)

    def run(self, prompt: str, approve: Approver | None = None, *,
            only_tools: Collection[str] | None = None, images: tuple[ImagePart, ...] = ()) -> Events:
        """One run (a REPL turn, a one-shot task): its events, then its RunFinished as the generator's value. An
        approval question is answered by the `Decision` the consumer sends back for the `ApprovalAsked` event
        (`events.send(decision)`), else by `approve(asked)`; with neither, the call is denied."""
        s = self._setup
        run = yield from self._started(prompt)
        self._judge.started(run)
        dispatcher, only_tools = self._approvals.scoped(s.dispatcher, only_tools)  # plan mode: read-only tools
        try:  # the prompt hooks' words, then the task's brief, go with the prompt (a blocking hook raises)
            brief = "\n\n".join(filter(None, ((yield from self._approvals.prompted(run, prompt)),
                                               (yield from briefed(s.brief, prompt)))))
            self._talk.append(run, Message("user", prompt + ("\n\n" + brief if brief else ""), images=images))
            finished = yield from self._steps(run, prompt, approve, dispatcher, only_tools)
        except (KeyboardInterrupt, errors.TerminateSignal, Exception) as exc:  # ends with a message and a trace
            finished = self._talk.stop(run, *stop_for(exc, s.limits))
        finished = yield from self._judge.as_left(run, finished)  # ended otherwise: its files' verdict as left
        self.usage = self.usage + run.usage
        ended = round(time.time(), 3)  # now: a first attempt's end, carried past its candidates, is not the run's
        return (yield from self._finished(run, replace(finished, time=ended)))

    def run_call(self, call: ToolCall, approve: Approver | None = None, *, by: str = "The workflow",
                 attach: Callable[[], bool] | None = None) -> Events:
        """One fixed call (a workflow's tool step, `cli-agent tools run`, the user's !COMMAND) through the same
        dispatcher and approval as the model's calls. Its result joins the conversation as a note saying who ran it
        (`by`), unless `attach`, asked once the result is in, says no; a denial stops with DENIED, an invalid call
        (unknown tool, bad arguments) with USAGE, a failed one with ERROR."""
        s = self._setup
        run = yield from self._started(f"(tool step) {call.name}")
        yield ToolCallsProposed(calls=(call,), terminate=True)
        try:
            dispatcher = s.dispatcher.unchecked_reads().at(run.deadline)
            prepared, reason = yield from self._approvals.settle(run, dispatcher.prepare(call), 1, 1, approve,
                                                                 dispatcher)
            envelope = Envelope.failure("denied: " + reason) if reason else dispatcher.execute(prepared)
            content = for_model(envelope, s.limits.tool_result_max_chars)[0]
            note = Message("user", f"({by} ran {call.name} with {call.raw_arguments}; result: {content})")
            if attach is None:  # in the conversation before its result is drawn, as a model's call is
                self._talk.append(run, note)
            if not reason:
                yield prepared.result(envelope)
            if attach is not None and attach():
                self._talk.append(run, note)
            if reason:
                finished = self._talk.stop(run, StopReason.DENIED, reason)
            else:
                failed = StopReason.USAGE if prepared.invalid else StopReason.ERROR
                finished = self._talk.stop(run, StopReason.DONE, "done") if envelope.ok else self._talk.stop(
                    run, failed, f"the tool step {call.name} failed: {'; '.join(envelope.errors)}")
        except (KeyboardInterrupt, errors.TerminateSignal) as exc:
            finished = self._talk.stop(run, *stop_for(exc, s.limits))
        return (yield from self._finished(run, finished))

    def rewrite(self, prompt: str, temperature: float) -> Events:
        """A whole-definition candidate for `prompt` (the judge's `rewrite`), as a run of its own; a run of the
        loop when the task shows no definition to rewrite."""
        places = self._judge.places(prompt)
        if not places:
            return (yield from self.run(prompt))
        run = yield from self._started(prompt)
        try:
            finished = yield from self._judge.rewrite(run, places, temperature)
        except (KeyboardInterrupt, errors.TerminateSignal, Exception) as exc:  # ends with a message, as a run does
            finished = self._talk.stop(run, *stop_for(exc, self._setup.limits))
        return (yield from self._finished(run, finished))

    def _started(self, prompt: str) -> Generator[Event, Decision | None, RunState]:
        s = self._setup
        yield RunStarted(run_id=uuid.uuid4().hex[:12], prompt=prompt, model=s.model, protocol=s.protocol.name,
                         workspace=s.workspace)
        return RunState(deadline=s.clock() + s.limits.timeout_s, task=prompt)

    def _finished(self, run: RunState, finished: RunFinished) -> Events:
        yield MessagesAppended(messages=tuple(run.appended))
        yield (finished := replace(finished, usage=run.usage))  # a rewrite candidate's too: its run counts them
        return finished

    # -- the steps of one run -------------------------------------------------------------------------------

    def _steps(self, run: RunState, prompt: str, approve: Approver | None, dispatcher: Dispatcher,
               only_tools: Collection[str] | None) -> Events:
        s = self._setup
        plan = s.planner(prompt, only_tools)  # once a run: a stable prompt keeps the server's prefix cache warm
        while True:
            if run.steps >= s.limits.max_steps:
                message = f"step limit reached ({s.limits.max_steps} model requests); raise --max-steps to go on"
                yield Warning(code="step_limit", message=message)
                return self._talk.stop(run, StopReason.STEP_LIMIT, message)
            yield from self._talk.window.fit(self.history, plan, s.limits.context_window or s.provider.context_window())
            wait = share_spent(s, run, plan, self.history)  # the first attempt's share spent, or too short for the
            if wait is not None:                             # next request's wait for its first token
                return (yield from self._judge.gave_way(run, approve, wait))
            run.steps += 1
            reply = yield from complete(s, run, plan, self.history)  # ModelRequest, retries, AssistantMessage
            if reply is None:  # cut at the end of the first attempt's share: the candidates get the rest
                return (yield from self._judge.gave_way(run, approve))
            spent = yield from over_budget(run, s.limits)
            if spent is not None:
                self._talk.append(run, Message("assistant", reply.text or "(stopped: budget reached)"))
                return self._talk.stop(run, StopReason.STEP_LIMIT, spent)
            parsed = self._talk.unique(s.protocol.parse(reply, run.steps))
            if parsed.error is not None:
                run.strikes += 1
                self._talk.append(run, Message("assistant", reply.text or ""))
                self._talk.append(run, s.protocol.error_message(parsed.error))
                yield Warning(code="malformed_reply", message=f"unusable reply {run.strikes}/{MAX_STRIKES}: "
                                                              f"{parsed.error}")
                if run.strikes >= MAX_STRIKES:
                    return self._talk.stop(run, StopReason.UNUSABLE,
                                      f"the model's output stayed unusable ({MAX_STRIKES} malformed replies in a row)")
                continue
            run.strikes = 0
            self._talk.append(run, s.protocol.assistant_message(reply, parsed))
            if not parsed.calls:
                finished = self._talk.done(run, "done", parsed.text)
            else:
                found = yield from self._run_calls(run, reply, parsed, approve, dispatcher)
                if found is None:
                    continue
                finished = found
            ended = yield from self._judge.verdict(run, finished, approve)
            if ended is not None:  # its files' verdict as left comes before the stop hook: the run is over after it
                ended = yield from self._judge.as_left(run, ended)
            if ended is not None and not (yield from self._approvals.stop_held(run, ended, self._talk)):
                return ended

    def _run_calls(self, run: RunState, reply: ProviderReply, parsed: Parsed, approve: Approver | None,
                   dispatcher: Dispatcher) -> Generator[Event, Decision | None, RunFinished | None]:
        """Propose the turn's calls together, then approve and run them in order. A denial ends the run."""
        limit = self._setup.limits.tool_result_max_chars
        calls = parsed.calls
        dispatcher = dispatcher.at(run.deadline)
        run.pending = {c.id: c for c in calls}
        yield ToolCallsProposed(calls=calls, terminate=parsed.terminate)
        failures, places = [], places_of(calls, dispatcher.registry)  # "(2/3)": among the calls a panel shows
        read_ahead = {} if self._approvals.hooked else dispatcher.read_ahead(calls)  # leading reads, at once
        for index, call in enumerate(calls, 1):
            if index - 1 in read_ahead:
                prepared, envelope = read_ahead[index - 1]
            else:
                prepared = dispatcher.prepare(call)
                if reply.finish_reason == "length" and prepared.spec is not None and prepared.spec.mutates:
                    prepared = replace(prepared, change=None, error=Envelope.failure(
                        "Your reply was cut off (finish_reason=length), so this change was not made. "
                        "Make a smaller change: edit_file with a short old/new, or split the file."))
                prepared = self._judge.kept(run, prepared)
                place = places.get(call.id, (0, 0))
                prepared, decision = yield from self._approvals.settle(run, prepared, *place, approve, dispatcher)
                if decision is not None and run.feedback is not None:  # denied with words: the model goes on
                    self._talk.answer_rest(run, call, f"denied by the user, who says: {run.feedback}"
                                                 f"{prepared.denial_note()}")
                    run.feedback = None
                    return None
                if decision is not None:
                    self._talk.answer_rest(run, call, "denied: " + decision)
                    return self._talk.stop(run, StopReason.DENIED, decision)
                envelope = yield from self._approvals.execute(run, prepared, dispatcher.at(run.deadline), approve)
            mutates = prepared.spec is not None and prepared.spec.mutates
            count = repeats.count_repeats(run, call, envelope, mutates)
            envelope = repeats.noted(envelope, count)
            if not envelope.ok:
                failures.append(f"{call.name}: {'; '.join(envelope.errors)}")
            if mutates and not prepared.blocked:  # a hook's block is the hook's doing, not a failed change
                run.failed_change = None if envelope.ok else {
                    "tool": call.name, "arguments": call.arguments, "errors": list(envelope.errors)}
            content, cut = for_model(envelope, limit)
            self._talk.record_result(run, call, content, envelope.images)
            result = prepared.result(envelope, model_chars=limit if cut else 0)
            run.record(result)
            yield result
            if cut:
                yield Warning(code="truncated", message=f"the result of {call.name} was {cut:,} characters too long "
                                                        "for the model and was cut")
            if count >= repeats.MAX_REPEATS:
                stopped = self._talk.stop(run, *repeats.stuck(run, call, envelope))
                return replace(stopped, failed_change=run.failed_change)
        if parsed.terminate and not failures:  # a failed terminating call goes back to the model like any other
            return self._talk.done(run, "done (terminate: true)", parsed.text or "")
        return None


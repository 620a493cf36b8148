"""The agent loop: a model works on the workspace through the tools until it answers, terminates, is denied, or
hits a limit.

`Agent.run(prompt, approve)` is a generator of typed events (`contracts.events`); it never prints, prompts or reads
the terminal. Approval is the injected `approve` callback, asked only for calls the policy cannot settle. One
`Agent` is one session: the conversation persists across runs (REPL turns). Every run ends with exactly one
`RunFinished` whose stop reason carries the exit code, preceded by one `MessagesAppended`: every message the run
added to the conversation, as the model saw it (what a resumed session gets back).
"""

from __future__ import annotations

import json
import random
import time
import uuid
from collections.abc import Callable, Collection, Generator, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from cli_agent.agent.approval import CallFacts, Policy, Verdict, assess
from cli_agent.contracts import errors
from cli_agent.contracts.change import Change, Staged
from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.events import (
    Answer,
    ApprovalAsked,
    ApprovalDecided,
    AssistantMessage,
    CommandOutput,
    Decision,
    Event,
    MessagesAppended,
    ModelRequest,
    Retry,
    RunFinished,
    RunStarted,
    StopReason,
    TextDelta,
    ToolCallsProposed,
    ToolResult,
    Verification,
    Warning,
)
from cli_agent.contracts.messages import Message, ToolCall, Usage
from cli_agent.prompt.plan import Plan
from cli_agent.providers.base import ProviderReply, ProviderRequest

if TYPE_CHECKING:
    from cli_agent.agent.attempts import Attempts
    from cli_agent.agent.verify import TestRun, Verifier
    from cli_agent.agent.wire import Parsed, WireProtocol
    from cli_agent.providers.base import Provider
    from cli_agent.tools.dispatch import Dispatcher, Prepared

__all__ = ["Agent", "AgentSetup", "Approver", "Limits", "Planner"]

Approver = Callable[[ApprovalAsked], "Decision | Answer"]
MAX_STRIKES = 3  # consecutive unusable replies before the run ends (exit 6)
MAX_REPEATS = 3  # the same call failing the same way this many times in a row ends the run (exit 7, or 6)
REPEAT_NOTE = ("this exact call already failed the same way, and will again: change its arguments (copy the file's "
               "text exactly from the lines shown) or do something else")


Planner = Callable[[str, "Collection[str] | None"], Plan]  # (task text, tool subset) -> plan


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
    verifier: Verifier | None = None  # the project's tests, run after a run's changes (cli_agent.agent.verify)
    attempts: Attempts | None = None  # more candidates when the tests still fail (cli_agent.agent.attempts)


@dataclass
class _Run:
    """The state of one run."""

    deadline: float
    steps: int = 0
    strikes: int = 0
    usage: Usage = field(default_factory=Usage)
    warned_budget: bool = False
    pending: dict[str, ToolCall] = field(default_factory=dict)  # calls in the history still without a result
    appended: list[Message] = field(default_factory=list)  # what this run added to the conversation
    feedback: str | None = None  # the user's words with the last denial: the turn goes on with them
    failed_change: dict[str, Any] | None = None  # the last change attempted, while it failed and none succeeded since
    repeats: tuple[str, int] = ("", 0)  # the last failed call (name, arguments, errors) and how often in a row
    changed: dict[str, None] = field(default_factory=dict)  # the paths this run changed, in order
    applied: list[Change] = field(default_factory=list)  # the changes this run applied, in order
    verify_round: int = 0  # test runs so far


class Agent:
    def __init__(self, setup: AgentSetup) -> None:
        self.setup = setup
        self.policy = setup.policy
        self.history: list[Message] = []
        self.usage = Usage()
        self._results: list[tuple[int, str]] = []  # (history index, tool) of every tool result, oldest first
        self._window: int | None = None  # the context window, once a request has asked for it
        self._fixed = 0  # the estimated tokens of the system prompt and the tool schemas
        self._fixed_for: Plan | None = None  # the plan `_fixed` was estimated for

    def clear(self) -> None:
        self.history.clear()
        self._results.clear()
        if self.setup.dispatcher.ctx.seen is not None:  # a new conversation has read nothing yet
            self.setup.dispatcher.ctx.seen.clear()

    def context_use(self) -> tuple[int, int | None]:
        """(estimated tokens the next request carries, the context window or None until the first request)."""
        return self._fixed + _history_tokens(self.history), self._window

    def run(self, prompt: str, approve: Approver | None = None, *,
            only_tools: Collection[str] | None = None) -> Generator[Event, Decision | None, RunFinished]:
        """One run (a REPL turn, a one-shot task): its events, then its RunFinished as the generator's value. An
        approval question is answered by the `Decision` the consumer sends back for the `ApprovalAsked` event
        (`events.send(decision)`), else by `approve(asked)`; with neither, the call is denied."""
        s = self.setup
        yield RunStarted(run_id=uuid.uuid4().hex[:12], prompt=prompt, model=s.model, protocol=s.protocol.name,
                         workspace=s.workspace)
        run = _Run(deadline=s.clock() + s.limits.timeout_s)
        brief = s.brief(prompt) if s.brief is not None else None
        self._append(run, Message("user", prompt + ("\n\n" + brief if brief else "")))
        dispatcher = s.dispatcher if only_tools is None else s.dispatcher.only(only_tools)
        try:
            finished = yield from self._steps(run, prompt, approve, dispatcher, only_tools)
        except KeyboardInterrupt:
            finished = self._stop(run, StopReason.INTERRUPTED, "interrupted by the user (Ctrl-C)")
        except errors.TerminateSignal:
            finished = self._stop(run, StopReason.TERMINATED, "terminated (SIGTERM)")
        except errors.RunTimeoutError as exc:
            finished = self._stop(run, StopReason.TIMEOUT, f"timed out after {s.limits.timeout_s:g} s ({exc})")
        except errors.UsageError as exc:
            finished = self._stop(run, StopReason.USAGE, str(exc))
        except errors.CliAgentError as exc:
            finished = self._stop(run, StopReason.ERROR, str(exc))
        except Exception as exc:  # an internal error still ends the run with a message and a complete trace
            finished = self._stop(run, StopReason.ERROR, f"internal error: {type(exc).__name__}: {exc}")
        self.usage = self.usage + run.usage
        yield MessagesAppended(messages=tuple(run.appended))
        finished = replace(finished, usage=run.usage)
        yield finished
        return finished

    def run_call(self, call: ToolCall, approve: Approver | None = None, *,
                 by: str = "The workflow") -> Generator[Event, Decision | None, RunFinished]:
        """One fixed call (a workflow's tool step, `cli-agent tools run`, the user's !COMMAND) through the same
        dispatcher and approval as the model's calls. Its result joins the conversation as a note saying who ran it
        (`by`); a denial stops with DENIED, an invalid call (unknown tool, bad arguments) with USAGE, a failed one
        with ERROR."""
        s = self.setup
        yield RunStarted(run_id=uuid.uuid4().hex[:12], prompt=f"(tool step) {call.name}", model=s.model,
                         protocol=s.protocol.name, workspace=s.workspace)
        run = _Run(deadline=s.clock() + s.limits.timeout_s)
        yield ToolCallsProposed(calls=(call,), terminate=True)
        try:
            dispatcher = s.dispatcher.unchecked_reads().at(run.deadline)
            prepared, reason = yield from self._settle(run, dispatcher.prepare(call), 1, 1, approve, dispatcher)
            envelope = Envelope.failure("denied: " + reason) if reason else dispatcher.execute(prepared)
            content = _for_model(envelope, s.limits.tool_result_max_chars)[0]
            self._append(run, Message("user", f"({by} ran {call.name} with {call.raw_arguments}; "
                                              f"result: {content})"))
            if reason:
                finished = self._stop(run, StopReason.DENIED, reason)
            else:
                yield _result(call, prepared, envelope)
                failed = StopReason.USAGE if prepared.invalid else StopReason.ERROR
                finished = self._stop(run, StopReason.DONE, "done") if envelope.ok else self._stop(
                    run, failed, f"the tool step {call.name} failed: {'; '.join(envelope.errors)}")
        except KeyboardInterrupt:
            finished = self._stop(run, StopReason.INTERRUPTED, "interrupted by the user (Ctrl-C)")
        except errors.TerminateSignal:
            finished = self._stop(run, StopReason.TERMINATED, "terminated (SIGTERM)")
        yield MessagesAppended(messages=tuple(run.appended))
        yield finished
        return finished

    # -- the steps of one run -------------------------------------------------------------------------------

    def _steps(self, run: _Run, prompt: str, approve: Approver | None, dispatcher: Dispatcher,
               only_tools: Collection[str] | None) -> Generator[Event, Decision | None, RunFinished]:
        s = self.setup
        plan = s.planner(prompt, only_tools)  # once a run: a stable prompt keeps the server's prefix cache warm
        while True:
            if run.steps >= s.limits.max_steps:
                message = f"step limit reached ({s.limits.max_steps} model requests); raise --max-steps to go on"
                yield Warning(code="step_limit", message=message)
                return self._stop(run, StopReason.STEP_LIMIT, message)
            run.steps += 1
            yield from self._fit_context(plan)
            yield ModelRequest(step=run.steps, fingerprint=plan.fingerprint, messages=len(self.history) + 1)
            reply = yield from self._complete(run, plan)
            run.usage = run.usage + reply.usage
            yield AssistantMessage(text=reply.text, tool_calls=reply.tool_calls, finish_reason=reply.finish_reason,
                                   usage=reply.usage)
            budget = yield from self._check_budget(run)
            if budget is not None:
                self._append(run, Message("assistant", reply.text or "(stopped: budget reached)"))
                return budget
            parsed = s.protocol.parse(reply, run.steps)
            if parsed.error is not None:
                run.strikes += 1
                self._append(run, Message("assistant", reply.text or ""))
                self._append(run, s.protocol.error_message(parsed.error))
                yield Warning(code="malformed_reply", message=f"unusable reply {run.strikes}/{MAX_STRIKES}: "
                                                              f"{parsed.error}")
                if run.strikes >= MAX_STRIKES:
                    return self._stop(run, StopReason.UNUSABLE,
                                      f"the model's output stayed unusable ({MAX_STRIKES} malformed replies in a row)")
                continue
            run.strikes = 0
            self._append(run, s.protocol.assistant_message(reply, parsed))
            if not parsed.calls:
                finished = self._done(run, "done", parsed.text)
            else:
                found = yield from self._run_calls(run, reply, parsed, approve, dispatcher)
                if found is None:
                    continue
                finished = found
            if finished.stop_reason is not StopReason.DONE or s.verifier is None or not run.changed:
                return finished
            verdict = yield from self._verify(run, s.verifier)
            if verdict.passed or not verdict.ran:
                return replace(finished, verified=True if verdict.ran else None, tests=verdict.summary)
            if run.verify_round > s.verifier.rounds:
                why = f"{s.verifier.rounds} repair round(s) did not fix them"
                if s.attempts is not None:
                    won, why = yield from self._candidates(run, prompt, s.attempts, approve, why)
                    if won is not None:
                        return replace(won, answer=finished.answer)
                stopped = self._stop(run, StopReason.TESTS_FAILED,
                                     f"the project's tests fail after the change ({verdict.summary}); {why}",
                                     answer=finished.answer)
                return replace(stopped, verified=False, tests=verdict.summary)
            self._append(run, Message("user", _test_feedback(verdict)))

    def _candidates(self, run: _Run, prompt: str, attempts: Attempts, approve: Approver | None,
                    why: str) -> Generator[Event, Decision | None, tuple[RunFinished | None, str]]:
        """Sample more candidates (cli_agent.agent.attempts); offer the first that passes its tests as one change set.
        Returns the run's end when it was applied, else None and why the tests still fail."""
        s = self.setup
        winner = yield from attempts.sample(prompt, tuple(run.applied), lambda: run.deadline - s.clock())
        if winner is None:
            return None, f"{why}, nor did {attempts.count - 1} more candidate(s)"
        call = ToolCall(id=f"attempt-{uuid.uuid4().hex[:8]}", name="attempts",
                        arguments={"candidate": winner.number, "of": attempts.count, "tests": winner.summary})
        staged = Staged({"candidate": winner.number, "tests": winner.summary}, winner.changes)
        yield ToolCallsProposed(calls=(call,), terminate=False)  # every front end knows the call it is asked about
        asked = ApprovalAsked(call=call, change=None, index=1, total=1, changes=winner.changes,
                              about=f"candidate {winner.number} of {attempts.count} passes the tests "
                                    f"({winner.summary}); these changes replace this run's")
        reason = yield from self._ask(run, CallFacts(call.name, True, staged.kind), asked, approve)
        if reason is not None:
            return None, f"{why}; candidate {winner.number}, which passes them, was not applied ({reason})"
        envelope = s.dispatcher.apply_set(staged)
        applied = set((envelope.data or {}).get("applied", ())) if isinstance(envelope.data, dict) else set()
        yield ToolResult(call_id=call.id, tool=call.name, envelope=envelope,
                         changes=tuple(c for c in staged.changes if c.path in applied))
        if not envelope.ok:
            return None, f"{why}; candidate {winner.number} passes them but could not be applied"
        self._append(run, Message("user", f"(Candidate {winner.number} of {attempts.count}, a fresh attempt at "
                                          f"this task, passed the tests ({winner.summary}) and was applied in place "
                                          f"of your change: {', '.join(staged.paths())}.)"))
        done = self._stop(run, StopReason.DONE, f"done: candidate {winner.number} of {attempts.count} passes the "
                                                f"tests")
        return replace(done, verified=True, tests=winner.summary, attempt=winner.number), ""

    def _verify(self, run: _Run, verifier: Verifier) -> Generator[Event, Decision | None, TestRun]:
        """Run the project's tests on what this run changed (in the command sandbox; nothing they write is kept)."""
        run.verify_round += 1
        yield Verification(command=verifier.command, round=run.verify_round, phase="running")
        testing = verifier.check(tuple(run.changed), run.deadline)
        try:
            while True:
                next(testing)
        except StopIteration as done:
            verdict: TestRun = done.value
        finally:
            testing.close()
        phase = "none" if not verdict.ran else "passed" if verdict.passed else "failed"
        yield Verification(command=verdict.command, round=run.verify_round, phase=phase, summary=verdict.summary)
        return verdict

    def _complete(self, run: _Run, plan: Plan) -> Generator[Event, Decision | None, ProviderReply]:
        """One model request, retried with exponential backoff and jitter while the error is retryable."""
        s = self.setup
        messages = tuple(([Message("system", plan.system)] if plan.system else []) + self.history)
        request = ProviderRequest(messages=messages, tools=plan.schemas if s.protocol.sends_tools else None,
                                  options=plan.request_options)
        stream_text = s.protocol.name != "json"
        attempt = 0
        while True:
            remaining = run.deadline - s.clock()
            if remaining <= 0:
                raise errors.RunTimeoutError("no time left for another model request")
            try:
                reply: ProviderReply | None = None
                for item in s.provider.stream(replace(request, timeout_s=remaining)):
                    if isinstance(item, str):
                        if stream_text and item:
                            yield TextDelta(text=item)
                    else:
                        reply = item
                if reply is None:
                    raise errors.ProviderError("the provider ended its reply without a result")
                return reply
            except errors.RetryableProviderError as exc:
                attempt += 1
                if attempt > s.limits.max_retries:
                    raise errors.ProviderError(f"{exc} (gave up after {attempt} tries)") from exc
                delay = s.limits.retry_base_delay * 2 ** (attempt - 1) * (0.5 + random.random() / 2)
                delay = max(0.0, min(delay, run.deadline - s.clock()))
                yield Retry(attempt=attempt, delay_s=round(delay, 3), reason=str(exc))
                s.sleep(delay)

    def _run_calls(self, run: _Run, reply: ProviderReply, parsed: Parsed, approve: Approver | None,
                   dispatcher: Dispatcher) -> Generator[Event, Decision | None, RunFinished | None]:
        """Propose the turn's calls together, then approve and run them in order. A denial ends the run."""
        s = self.setup
        calls = parsed.calls
        dispatcher = dispatcher.at(run.deadline)
        run.pending = {c.id: c for c in calls}
        yield ToolCallsProposed(calls=calls, terminate=parsed.terminate)
        failures = []
        read_ahead = dispatcher.read_ahead(calls)  # leading read-only calls, run at the same time
        for index, call in enumerate(calls, 1):
            if index - 1 in read_ahead:
                prepared, envelope = read_ahead[index - 1]
            else:
                prepared = dispatcher.prepare(call)
                if reply.finish_reason == "length" and prepared.spec is not None and prepared.spec.mutates:
                    prepared = replace(prepared, change=None, error=Envelope.failure(
                        "Your reply was cut off (finish_reason=length), so this change was not made. "
                        "Make a smaller change: edit_file with a short old/new, or split the file."))
                prepared, decision = yield from self._settle(run, prepared, index, len(calls), approve, dispatcher)
                if decision is not None and run.feedback is not None:  # denied with words: the model goes on
                    self._answer_rest(run, call, f"denied by the user, who says: {run.feedback}"
                                                 f"{prepared.denial_note()}")
                    run.feedback = None
                    return None
                if decision is not None:
                    self._answer_rest(run, call, "denied: " + decision)
                    return self._stop(run, StopReason.DENIED, decision)
                envelope = dispatcher.at(run.deadline).execute(prepared)  # the deadline moved by answers' time
            repeats = _repeats(run, call, envelope, prepared.spec is not None and prepared.spec.mutates)
            if repeats == MAX_REPEATS - 1:
                envelope = replace(envelope, warnings=(*envelope.warnings, REPEAT_NOTE))
            if not envelope.ok:
                failures.append(f"{call.name}: {'; '.join(envelope.errors)}")
            if prepared.spec is not None and prepared.spec.mutates:
                run.failed_change = None if envelope.ok else {
                    "tool": call.name, "arguments": call.arguments, "errors": list(envelope.errors)}
            content, cut = _for_model(envelope, s.limits.tool_result_max_chars)
            self._record_result(run, call, content)
            result = _result(call, prepared, envelope, model_chars=s.limits.tool_result_max_chars if cut else 0)
            run.applied.extend(c for c in (result.change, *result.changes) if c is not None)
            run.changed.update((c.path, None) for c in (result.change, *result.changes) if c is not None)
            yield result
            if cut:
                yield Warning(code="truncated", message=f"the result of {call.name} was {cut:,} characters too long "
                                                        "for the model and was cut")
            if repeats >= MAX_REPEATS:
                return self._repeated(run, call, envelope)
        if parsed.terminate and not failures:  # a failed terminating call goes back to the model like any other
            return self._done(run, "done (terminate: true)", parsed.text or "")
        return None

    def _settle(self, run: _Run, prepared: Prepared, index: int, total: int, approve: Approver | None,
                dispatcher: Dispatcher) -> Generator[Event, Decision | None, tuple[Prepared, str | None]]:
        """Approval for one call: the call (for a command, whether it may run; then it runs, in the sandbox) and
        then its changes. Returns the call as prepared and None, or the one-line reason it was denied."""
        if prepared.error is not None or prepared.spec is None:
            return prepared, None
        if prepared.deferred:
            reason = yield from self._decide(run, prepared, index, total, approve)
            if reason is not None:
                return prepared, reason
            prepared = yield from self._stage(prepared, dispatcher.at(run.deadline))
            if prepared.error is not None:
                return prepared, None
        reason = yield from self._decide(run, prepared, index, total, approve)
        return prepared, None if reason is None else reason + prepared.denial_note()

    def _stage(self, prepared: Prepared, dispatcher: Dispatcher) -> Generator[Event, Decision | None, Prepared]:
        """Run a command; its output becomes CommandOutput events, at most five a second (the latest 4 KiB), after
        an empty one that says it has started."""
        import codecs

        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        yield CommandOutput(call_id=prepared.call.id, text="")
        running = dispatcher.stage(prepared)
        pending, last = "", self.setup.clock()
        try:
            while True:
                try:
                    chunk = next(running)
                except StopIteration as done:
                    staged: Prepared = done.value
                    break
                pending = (pending + decoder.decode(chunk))[-4096:]
                if pending and self.setup.clock() - last >= 0.2:
                    yield CommandOutput(call_id=prepared.call.id, text=pending)
                    pending, last = "", self.setup.clock()
        finally:
            running.close()  # an interrupt thrown in at a yield still kills the command
        if pending:
            yield CommandOutput(call_id=prepared.call.id, text=pending)
        return staged

    def _decide(self, run: _Run, prepared: Prepared, index: int, total: int,
                approve: Approver | None) -> Generator[Event, Decision | None, str | None]:
        """Settle approval for one call; returns None when it may run, else the one-line reason it may not."""
        spec = prepared.spec
        assert spec is not None
        asked = ApprovalAsked(call=prepared.call, change=prepared.change, index=index, total=total,
                              about=spec.approval_note,
                              changes=prepared.staged.changes if prepared.staged is not None else ())
        facts = CallFacts(prepared.call.name, prepared.needs_approval, prepared.approval_kind)
        return (yield from self._ask(run, facts, asked, approve))

    def _ask(self, run: _Run, facts: CallFacts, asked: ApprovalAsked,
             approve: Approver | None) -> Generator[Event, Decision | None, str | None]:
        """The policy's answer for a call, else the user's (`asked`); None when it may go ahead, else why not."""
        s = self.setup
        call = asked.call
        assessment = assess(facts, self.policy)
        if assessment.verdict is Verdict.ALLOW:
            if facts.requires_approval:
                yield ApprovalDecided(call_id=call.id, decision=Decision.YES, by="policy", rule=assessment.rule)
            return None
        if assessment.verdict is Verdict.DENY:
            yield ApprovalDecided(call_id=call.id, decision=Decision.NO, by="non-interactive", rule=assessment.rule)
            return (f"{call.name} needs approval and no one can be asked (not a terminal); "
                    f"re-run with {assessment.rule} to allow it")
        waited_from = s.clock()
        sent = yield asked
        answer = sent if isinstance(sent, Decision | Answer) else approve(asked) if approve is not None else Decision.NO
        run.deadline += s.clock() - waited_from  # the time a person takes to answer is not the run's
        decision, feedback = (answer.decision, answer.feedback) if isinstance(answer, Answer) else (answer, "")
        if decision is Decision.FEEDBACK and not feedback.strip():
            decision = Decision.NO  # no words for the model: a plain no
        yield ApprovalDecided(call_id=call.id, decision=decision, by="user", feedback=feedback.strip())
        if decision is Decision.FEEDBACK:
            run.feedback = feedback.strip()
        if decision is Decision.ALL:
            self.policy = self.policy.grant_all()
        elif decision is Decision.TOOL:
            self.policy = self.policy.grant_tool(call.name)
        if decision.approves:
            return None
        return f"{call.name} was denied by the user" + (" (turn aborted)" if decision is Decision.QUIT else "")

    def _check_budget(self, run: _Run) -> Generator[Event, Decision | None, RunFinished | None]:
        limits = self.setup.limits
        checks = [("tokens", run.usage.total_tokens, limits.max_tokens_total),
                  ("cost (USD)", run.usage.cost_usd, limits.max_cost_usd)]
        for what, used, cap in checks:
            if cap is None:
                continue
            if used >= cap:
                message = f"budget reached: {what} used {used:g} of {cap:g}"
                yield Warning(code="budget", message=message)
                return self._stop(run, StopReason.STEP_LIMIT, message)
            if used >= 0.8 * cap and not run.warned_budget:
                run.warned_budget = True
                yield Warning(code="budget", message=f"80 % of the budget used: {what} {used:g} of {cap:g}")
        return None

    # -- the conversation -----------------------------------------------------------------------------------

    def _append(self, run: _Run, message: Message) -> None:
        """Add a message to the conversation, and record it for the run's `MessagesAppended` (what a resumed
        session gets back, exactly as the model saw it)."""
        self.history.append(message)
        run.appended.append(message)

    def _record_result(self, run: _Run, call: ToolCall, content: str) -> None:
        self._results.append((len(self.history), call.name))
        self._append(run, self.setup.protocol.result_message(call, content))
        run.pending.pop(call.id, None)

    def _answer_rest(self, run: _Run, denied: ToolCall, reason: str) -> None:
        """Answer the denied call and every call after it, so no tool call is left without a result."""
        self._record_result(run, denied, Envelope.failure(reason).to_json())
        for call in list(run.pending.values()):
            self._record_result(run, call, Envelope.failure(
                "not run: an earlier call in this turn was denied").to_json())

    def _repeated(self, run: _Run, call: ToolCall, envelope: Envelope) -> RunFinished:
        """The model sent the same failing call MAX_REPEATS times in a row: it is stuck, and the run ends; a failed
        change ends it as a failed change (exit 7), anything else as unusable output (exit 6)."""
        why = "; ".join(envelope.errors)[:300]
        message = f"the model sent the same failing call {MAX_REPEATS} times in a row ({call.name}: {why})"
        if run.failed_change is None:
            return self._stop(run, StopReason.UNUSABLE, message)
        return replace(self._stop(run, StopReason.CHANGE_FAILED, message), failed_change=run.failed_change)

    def _done(self, run: _Run, message: str, answer: str) -> RunFinished:
        """The model says it is done: a success, unless the last change it attempted failed and none came after."""
        failed = run.failed_change
        if failed is None:
            return self._stop(run, StopReason.DONE, message, answer=answer)
        path = failed["arguments"].get("path", "") if isinstance(failed["arguments"], dict) else ""
        why = "; ".join(failed["errors"])[:300]
        return replace(self._stop(run, StopReason.CHANGE_FAILED, f"the model stopped after a failed change "
                                                                 f"({failed['tool']} {path}: {why}); nothing was "
                                                                 f"changed after it", answer=answer),
                       failed_change=failed)

    def _stop(self, run: _Run, reason: StopReason, message: str, answer: str = "") -> RunFinished:
        for call in list(run.pending.values()):  # an interrupted turn still leaves a valid conversation
            self._record_result(run, call, Envelope.failure(f"not run: {message}").to_json())
        if reason in (StopReason.INTERRUPTED, StopReason.TERMINATED, StopReason.TIMEOUT, StopReason.ERROR) \
                and self.history and self.history[-1].role != "assistant":
            self._append(run, Message("assistant", f"(this turn was cut short: {message})"))
        return RunFinished(stop_reason=reason, message=message, answer=answer, steps=run.steps)

    def _fit_context(self, plan: Plan) -> Iterator[Warning]:
        """Near the context window, replace the oldest tool results with one-line notes, and say so."""
        window = self.setup.limits.context_window or self.setup.provider.context_window()
        if self._fixed_for is not plan:  # a plan is reused while the tools and the prompt stay the same
            self._fixed_for, self._fixed = plan, _tokens(plan.system or "") + _tokens(str(plan.schemas or ""))
        self._window, fixed = window, self._fixed
        if not window:
            return
        budget = int(window * 0.8)
        used = fixed + _history_tokens(self.history)
        elided = 0
        for index, tool in self._results[:-1]:  # the newest result is never elided
            if used <= budget:
                break
            message = self.history[index]
            if (message.content or "").startswith("[elided"):
                continue
            note = (f"[elided to fit the context window: the result of {tool} "
                    f"({len(message.content or ''):,} characters); call {tool} again if you need it]")
            used -= _tokens(message.content or "") - _tokens(note)
            self.history[index] = replace(message, content=note)
            elided += 1
        if elided:
            yield Warning(code="context_elided", message=f"{elided} old tool result(s) elided to stay within the "
                                                         f"context window ({window:,} tokens)")


def _result(call: ToolCall, prepared: Prepared, envelope: Envelope, model_chars: int = 0) -> ToolResult:
    """The ToolResult of a call that ran, with what it wrote (a staged set's applied part)."""
    applied = set((envelope.data or {}).get("applied", ())) if isinstance(envelope.data, dict) else set()
    return ToolResult(call_id=call.id, tool=call.name, envelope=envelope,
                      change=prepared.change if envelope.ok else None,
                      changes=tuple(c for c in prepared.changes if prepared.staged is not None and c.path in applied),
                      model_chars=model_chars)


def _test_feedback(verdict: TestRun) -> str:
    """What the model is told when the tests fail after its change."""
    return (f"The project's tests fail after your change (`{verdict.command}`: {verdict.summary}).\n"
            f"{verdict.failures}\n\nFix the code so that these tests pass (change a test only if the task asks "
            "for it), then say that you are done.")


def _tokens(text: str) -> int:
    """A cheap estimate (about four characters a token), good enough to decide when to elide."""
    return len(text) // 4 + 1


def _repeats(run: _Run, call: ToolCall, envelope: Envelope, mutates: bool) -> int:
    """How many times in a row this call has now failed this way (0: it did not fail). A read that succeeds in
    between does not break the row (a stuck model reads the file again and sends the same failing edit)."""
    if envelope.ok:
        if mutates or run.repeats[0].split("\0", 1)[0] == call.name:
            run.repeats = ("", 0)
        return 0
    arguments = json.dumps(call.arguments, sort_keys=True, default=str)
    key = "\0".join((call.name, arguments, *envelope.errors))
    run.repeats = (key, run.repeats[1] + 1 if run.repeats[0] == key else 1)
    return run.repeats[1]


def _history_tokens(history: list[Message]) -> int:
    return sum(m.chars // 4 + 1 for m in history)  # _tokens of each message's text and arguments


def _for_model(envelope: Envelope, limit: int) -> tuple[str, int]:
    """The envelope as the model sees it, cut at `limit` characters with a note saying how to get the rest."""
    text = envelope.to_json()
    if len(text) <= limit:
        return text, 0
    cut = len(text) - limit
    return (text[:limit] + f"\n[... {cut:,} more characters left out. Ask for less: read_file with "
                           "start_line/end_line, or a narrower search or pattern.]"), cut

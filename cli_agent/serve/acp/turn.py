"""One prompt turn, driven in a worker thread while the protocol's event loop keeps answering.

Each event of the run goes to the session's trace and, as session updates, to the client. An approval question
becomes a `session/request_permission` and its answer the `Decision` sent back into the run. A cancel, or a client
that is gone (its stdin closed, a request or update that cannot be sent), is thrown into the run at its next event
as the REPL's Esc is: the run finishes cleanly, a running command is killed, and a change not yet approved is never
written. Changes are applied only between events, so none is ever half-applied.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import (
    ApprovalAsked,
    ApprovalDecided,
    AssistantMessage,
    CommandOutput,
    Decision,
    Event,
    EventStream,
    HookRan,
    ModelRequest,
    PlanUpdated,
    Retry,
    RunFinished,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallsProposed,
    ToolResult,
    Verification,
    Warning,
    dataclass,
)
from cli_agent.providers import cancelled_by
from cli_agent.serve.acp import updates

if TYPE_CHECKING:
    from cli_agent.tools import Registry

_log = logging.getLogger("cli_agent.serve.acp")
_SEND_TIMEOUT = 30.0  # seconds an update may take to be written before the client counts as gone
_OUTPUT_CHARS = 8192  # the tail of a running command's output shown in its tool call
# The events a run yields from inside its steps, where an interrupt thrown in finishes it cleanly (RunStarted, a
# workflow step's proposal, the session's notes and the run's last two events come from outside them).
_INSIDE = (TextDelta, ThinkingDelta, ModelRequest, AssistantMessage, ApprovalAsked, ApprovalDecided, ToolResult,
           CommandOutput, Retry)


@dataclass(frozen=True)
class Outcome:
    finished: RunFinished
    finish_reason: str = "stop"  # of the last model reply
    warning: str = ""  # the code of the last warning (a budget stop is "budget")


@dataclass
class Turn:
    """`client` is the SDK's connection to the client, `loop` the event loop it runs on; `refused` the tools the
    user rejected for the rest of the session (shared with the session)."""

    session_id: str
    root: Path
    client: Any
    loop: asyncio.AbstractEventLoop
    trace: Callable[[Event], None]
    refused: set[str] = field(default_factory=set)
    registry: Registry | None = None  # the session's tools, whose specs give a call's kind
    follow: Callable[[str, int], None] | None = None  # a call started a background process: show it as it goes on
    answered: concurrent.futures.Future[Outcome] = field(default_factory=concurrent.futures.Future)
    _cancelled: threading.Event = field(default_factory=threading.Event)
    _gone: bool = False

    def cancel(self) -> None:
        self._cancelled.set()

    @property
    def cancelled(self) -> bool:
        """The client cancelled the turn (or went away)."""
        return self._cancelled.is_set()

    def answer(self, outcome: Outcome) -> None:
        if not self.answered.done():
            self.answered.set_result(outcome)

    def drive(self, events: EventStream, *, runs: int = 1) -> Outcome:
        """Run the events to their end (in a worker thread); the last run's outcome. With one run (`runs=1`) it is
        also `answered` as soon as the run has finished (what follows, the session index's note, does not delay the
        answer); the events of a workflow (`runs=0`: how many is not known) are answered at their end."""
        with cancelled_by(self._cancelled):  # a cancel gives up a model reply in flight
            return self._drive(events, runs)

    def _drive(self, events: EventStream, runs: int) -> Outcome:
        send: Decision | None = None
        throw: BaseException | None = None
        finished: RunFinished | None = None
        finish_reason, warning, streamed = "stop", "", False
        outputs: dict[str, str] = {}
        open_calls: dict[str, None] = {}  # calls proposed and not yet answered by a result, in order
        planning: set[str] = set()  # update_plan calls: shown as the `plan` update, not as tool calls
        while True:
            try:
                event = events.throw(throw) if throw is not None else events.send(send) if send is not None \
                    else next(events)
            except StopIteration:
                break
            send, throw = None, None
            self.trace(event)
            if self._cancelled.is_set() and isinstance(event, _INSIDE):
                throw = KeyboardInterrupt()
                continue
            if isinstance(event, TextDelta):
                streamed = True
                self._post(updates.text_chunk(event.text))
            elif isinstance(event, ThinkingDelta):  # a reasoning model's thinking, apart from the answer
                self._post(updates.thought_chunk(event.text))
            elif isinstance(event, ModelRequest):
                streamed = False
            elif isinstance(event, AssistantMessage) and not event.candidate:  # a candidate's reply is not the turn's
                finish_reason = event.finish_reason
            elif isinstance(event, ToolCallsProposed):
                for call in event.calls:
                    if updates.plans(call.name, self.registry):  # the plan is its own update (PlanUpdated)
                        planning.add(call.id)
                        continue
                    open_calls[call.id] = None
                    self._post(updates.tool_call_start(call, self.root, registry=self.registry))
            elif isinstance(event, ApprovalAsked):
                decision = self._ask(event)
                if decision is None:
                    throw = KeyboardInterrupt()
                else:
                    send = decision
            elif isinstance(event, CommandOutput):
                outputs[event.call_id] = (outputs.get(event.call_id, "") + event.text)[-_OUTPUT_CHARS:]
                self._post(updates.command_output(event.call_id, outputs[event.call_id]))
            elif isinstance(event, ToolResult) and event.call_id in planning:
                pass  # the model's checklist went out as the `plan` update
            elif isinstance(event, ToolResult):
                open_calls.pop(event.call_id, None)
                self._post(updates.result_update(event, self.root))
                number = updates.started_in_background(event)
                if number is not None and self.follow is not None:  # its tool call goes on with its output
                    self.follow(event.call_id, number)
            elif isinstance(event, Verification):  # the harness's own test run: a line of the turn's answer
                self._post(updates.text_chunk("\n" + event.line + "\n"))
            elif isinstance(event, Retry):  # shown as it happens: a model server that stays away is not silence
                _log.warning("retrying: %s", event.reason)
                self._post(updates.thought_chunk(f"retrying in {event.delay_s:.1f}s (attempt {event.attempt}): "
                                                 f"{event.reason}\n"))
            elif isinstance(event, PlanUpdated):
                self._post(updates.plan_update(event))
            elif isinstance(event, HookRan):
                self._post(updates.thought_chunk(updates.hook_line(event)))
            elif isinstance(event, Warning):
                warning = event.code
                _log.warning("%s", event.message)
            elif isinstance(event, RunFinished):
                finished = event
                for call_id in open_calls:  # denied, or not run after a denial or a stop
                    self._post(updates.not_run(call_id, event.message))
                self._finish(event, streamed)
                if runs == 1:
                    self.answer(Outcome(event, finish_reason, warning))
        if finished is None:  # the loop always ends with RunFinished; a bug guard, not a path
            finished = RunFinished(stop_reason=StopReason.ERROR, message="internal error: the run ended without a "
                                                                         "result")
        outcome = Outcome(finished, finish_reason, warning)
        self.answer(outcome)
        return outcome

    def _finish(self, finished: RunFinished, streamed: bool) -> None:
        """The answer when it was not streamed (the json protocol), and why the run stopped unless it ended well
        or was cancelled."""
        if finished.answer and not streamed:
            self._post(updates.text_chunk(finished.answer))
        if updates.stop_reason(finished, "stop", "") not in ("cancelled", None) \
                and finished.stop_reason is not StopReason.DONE:
            self._post(updates.text_chunk(f"\n\n(cli-agent: {finished.message})"))

    def note(self, text: str) -> None:
        """A line for the user, as part of the answer."""
        self._post(updates.text_chunk(text))

    def _post(self, update: Any) -> None:
        """Send one session update and wait until it is written (updates keep their order)."""
        if self._gone:
            return
        try:
            future = asyncio.run_coroutine_threadsafe(
                self.client.session_update(session_id=self.session_id, update=update), self.loop)
            future.result(timeout=_SEND_TIMEOUT)
        except Exception as exc:  # closed connection, stopped loop, timeout: the client is gone
            self._lost(exc)

    def _lost(self, exc: BaseException) -> None:
        if not self._gone:
            _log.warning("the client is gone (%s); the turn is cancelled", type(exc).__name__)
        self._gone = True
        self._cancelled.set()

    def _ask(self, asked: ApprovalAsked) -> Decision | None:
        """The client's answer to an approval question; None when the turn is cancelled meanwhile."""
        if asked.call.name in self.refused:
            return Decision.NO
        if self._gone:
            return None
        try:
            future = asyncio.run_coroutine_threadsafe(
                self.client.request_permission(session_id=self.session_id,
                                               tool_call=updates.permission_call(asked, self.root, self.registry),
                                               options=updates.PERMISSION_OPTIONS), self.loop)
        except RuntimeError as exc:
            self._lost(exc)
            return None
        while True:
            if self._cancelled.is_set():
                future.cancel()
                return None
            try:
                response = future.result(timeout=0.05)
                break
            except concurrent.futures.TimeoutError:
                continue
            except Exception as exc:
                self._lost(exc)
                return None
        outcome = response.outcome
        if outcome.outcome != "selected":
            return None  # the client cancelled the question (it does so for a cancelled turn)
        decision = updates.ANSWERS.get(outcome.option_id)
        if decision is None:
            _log.warning("unknown permission option %r: taken as a rejection", outcome.option_id)
            return Decision.NO
        if outcome.option_id == "reject_always":
            self.refused.add(asked.call.name)
        if decision is Decision.ALWAYS and not asked.always:  # no rule to write: the tool for the session
            return Decision.TOOL
        return decision

"""The conversation of a recorded session, rebuilt from its trace: what `--continue`, `--resume` and the REPL's
`/resume` give back to the agent (`agent.history`).

The events hold everything the loop appended to the conversation, except the exact text of a long tool result (the
trace keeps the envelope; the default cut is applied again) and old results the loop elided to fit the context
window (they come back whole; the agent elides again when it needs to).
"""

from __future__ import annotations

from cli_agent.envelope import Envelope
from cli_agent.events import (
    ApprovalDecided,
    AssistantMessage,
    Event,
    ModelRequest,
    RunFinished,
    RunStarted,
    StopReason,
    ToolCallsProposed,
    ToolResult,
    Warning,
)
from cli_agent.messages import Message, ToolCall
from cli_agent.trace import Trace

__all__ = ["is_tool_step", "restore_history"]


_CUT_SHORT = (StopReason.INTERRUPTED, StopReason.TERMINATED, StopReason.TIMEOUT, StopReason.ERROR)
_RESULT_MAX = 20_000  # Limits.tool_result_max_chars' default: what a trace can't tell, the default stands for


def restore_history(trace: Trace) -> list[Message]:
    """The conversation as the agent held it after the trace's last run, rebuilt the way the loop builds it: the
    prompts, each reply through its run's protocol, each tool result as the model saw it (from the envelope, cut
    at the default length), and the answers the loop gives denied or unfinished calls. Old tool results the loop
    had elided to fit the context window come back whole."""
    history: list[Message] = []
    for run in trace.runs:
        if run and isinstance(run[0], RunStarted):
            _restore_run(run, history)
    return history


def is_tool_step(run: list[Event]) -> bool:
    """Whether `run` is a workflow's tool step (`Agent.run_call`): a "(tool step) NAME" run without a model request."""
    started = run[0]
    return (isinstance(started, RunStarted) and started.prompt.startswith("(tool step) ")
            and not any(isinstance(e, ModelRequest) for e in run))


def _restore_run(events: list[Event], history: list[Message]) -> None:
    from cli_agent.loop import _for_model  # the exact text a tool result became for the model
    from cli_agent.protocols import protocol_for
    from cli_agent.providers.base import ProviderReply

    started = events[0]
    assert isinstance(started, RunStarted)
    protocol = protocol_for(started.protocol if started.protocol in ("native", "json", "plain") else "native")
    if is_tool_step(events):
        _restore_tool_step(events, history)
        return
    history.append(Message("user", started.prompt))
    pending: dict[str, ToolCall] = {}
    denied: str | None = None
    step = 0
    for index, event in enumerate(events):
        if isinstance(event, ModelRequest):
            step = event.step
        elif isinstance(event, AssistantMessage):
            after = events[index + 1] if index + 1 < len(events) else None
            if isinstance(after, Warning) and after.code == "budget" and after.message.startswith("budget reached"):
                history.append(Message("assistant", event.text or "(stopped: budget reached)"))
                continue
            reply = ProviderReply(event.text, event.tool_calls, event.finish_reason, event.usage)
            parsed = protocol.parse(reply, step)
            if parsed.error is not None:
                history += [Message("assistant", event.text or ""), protocol.error_message(parsed.error)]
            else:
                history.append(protocol.assistant_message(reply, parsed))
                pending = {call.id: call for call in parsed.calls}
        elif isinstance(event, ApprovalDecided) and not event.decision.approves:
            denied = event.call_id
        elif isinstance(event, ToolResult):
            call = pending.pop(event.call_id, None) or ToolCall(event.call_id, event.tool, {})
            history.append(protocol.result_message(call, _for_model(event.envelope, _RESULT_MAX)[0]))
        elif isinstance(event, RunFinished):
            turn_denied = denied in pending
            for call_id, call in list(pending.items()):
                if call_id == denied:
                    why = "denied: " + event.message
                elif turn_denied:
                    why = "not run: an earlier call in this turn was denied"
                else:
                    why = f"not run: {event.message}"
                history.append(protocol.result_message(call, Envelope.failure(why).to_json()))
            pending.clear()
            if event.stop_reason in _CUT_SHORT and history and history[-1].role != "assistant":
                history.append(Message("assistant", f"(this turn was cut short: {event.message})"))


def _restore_tool_step(events: list[Event], history: list[Message]) -> None:
    """A workflow's tool step (`Agent.run_call`): its result joins the conversation as a note."""
    from cli_agent.loop import _for_model

    proposed = next((e for e in events if isinstance(e, ToolCallsProposed)), None)
    result = next((e for e in events if isinstance(e, ToolResult)), None)
    finished = next((e for e in events if isinstance(e, RunFinished)), None)
    if proposed is not None and proposed.calls and finished is not None:
        call = proposed.calls[0]
        if result is not None:
            envelope = result.envelope
        elif finished.stop_reason is StopReason.DENIED:
            envelope = Envelope.failure("denied: " + finished.message)
        else:
            envelope = None
        if envelope is not None:
            content = _for_model(envelope, _RESULT_MAX)[0]
            history.append(Message("user", f"(The workflow ran {call.name} with {call.raw_arguments}; "
                                           f"result: {content})"))
    if finished is not None and finished.stop_reason in _CUT_SHORT and history and history[-1].role != "assistant":
        history.append(Message("assistant", f"(this turn was cut short: {finished.message})"))

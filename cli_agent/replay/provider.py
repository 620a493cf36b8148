"""Playing a recording back: the settings it ran with (as far as the trace tells), the model's replies through the
ScriptedProvider, and the recorded approvals. `engine` drives a session with these and compares.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import re
from collections import deque
from pathlib import Path
from typing import Any

from cli_agent.config import load_settings
from cli_agent.contracts import (
    Answer,
    ApprovalAsked,
    ApprovalDecided,
    AssistantMessage,
    Decision,
    Event,
    ModelRequest,
    RunFinished,
    StopReason,
    SubagentEvent,
    ThinkingDelta,
    ToolCall,
    ToolCallsProposed,
    ToolResult,
    errors,
    event_from_dict,
)
from cli_agent.history import Trace
from cli_agent.providers import NoModel, ScriptedProvider

_RAISED: dict[StopReason, type[errors.CliAgentError]] = {
    StopReason.ERROR: errors.ProviderError, StopReason.USAGE: errors.MissingCredentialsError,
    StopReason.TIMEOUT: errors.RunTimeoutError}


def replay_settings(trace: Trace, copy: Path, tmp: Path) -> Any:
    """The recording's settings as far as the trace has them: protocol, model, the limits that stopped a run."""
    protocol = str(trace.header.get("protocol") or "native")
    flags: dict[str, Any] = {"workspace": str(copy), "model": str(trace.header.get("model") or "replay"),
                             "trace": str(tmp / "replay.jsonl")}
    settings = load_settings(flags, workspace=copy).settings
    update: dict[str, Any] = {"protocol": protocol if protocol in ("native", "json") else "auto",
                              "no_tools": protocol == "plain", "yes": False, "approval": "ask", "max_steps": 10_000,
                              "timeout": 24 * 3600.0, "max_retries": 0, "max_tokens_total": None,
                              "max_cost_usd": None, "mcp_servers": {}}  # MCP results come from the trace
    locks = list(settings.locks)
    for event in trace.events:
        for error in event.envelope.errors if isinstance(event, ToolResult) else ():
            # a lock that refused a call then (from a config layer the trace doesn't hold) refuses it again
            locks += [glob for glob in re.findall(r"is locked by the user \(lock '([^']+)'\)", error)
                      if glob not in locks]
        if isinstance(event, RunFinished) and event.stop_reason is StopReason.STEP_LIMIT:
            budget = re.match(r"budget reached: (tokens|cost \(USD\)) used \S+ of (\S+)", event.message)
            if budget:
                key = "max_tokens_total" if budget.group(1) == "tokens" else "max_cost_usd"
                update[key] = float(budget.group(2)) if key == "max_cost_usd" else int(float(budget.group(2)))
            elif event.message.startswith("step limit reached"):
                update["max_steps"] = event.steps
    return dataclasses.replace(settings, **(update | {"locks": locks}))


def first_call(run: list[Event]) -> ToolCall | None:
    proposed = next((e for e in run if isinstance(e, ToolCallsProposed) and e.calls), None)
    return proposed.calls[0] if proposed is not None else None


def outcomes(trace: Trace) -> list[dict[str, Any] | errors.CliAgentError]:
    """One outcome per recorded model request: the reply, or the error the request ended the run with."""
    out: list[dict[str, Any] | errors.CliAgentError] = []
    for run in trace.runs:
        finished = run[-1] if isinstance(run[-1], RunFinished) else None
        run = [_unnested(e) for e in run]  # a sub-task's requests (the task tool) came in their place, in order
        for index, event in enumerate(run):
            if not isinstance(event, ModelRequest):
                continue
            rest = run[index + 1:]
            end = next((i for i, e in enumerate(rest) if isinstance(e, ModelRequest | RunFinished)), len(rest))
            reply = next((e for e in rest[:end] if isinstance(e, AssistantMessage)), None)
            if reply is not None:
                proposed = next((e for e in rest[:end] if isinstance(e, ToolCallsProposed)), None)
                thinking = "".join(e.text for e in rest[:end] if isinstance(e, ThinkingDelta))
                out.append(_reply_item(reply, proposed) | ({"thinking": thinking} if thinking else {}))
            elif finished is not None and finished.stop_reason in _RAISED:
                out.append(_RAISED[finished.stop_reason](finished.message))
    return out


def _unnested(event: Event) -> Event:
    """A sub-task's model request, reply, proposed calls or approval answer as its own event (replayed in order);
    others as they are."""
    if isinstance(event, SubagentEvent) and event.event.get("type") in _NESTED_REQUESTS:
        with contextlib.suppress(KeyError, ValueError, TypeError):
            return event_from_dict(event.event)
    return event


_NESTED_REQUESTS = ("model_request", "assistant_message", "tool_calls_proposed", "approval_decided")


def _reply_item(message: AssistantMessage, proposed: ToolCallsProposed | None) -> dict[str, Any]:
    item: dict[str, Any] = {"text": message.text, "finish_reason": message.finish_reason,
                            "usage": message.usage.to_dict()}
    calls = []
    for i, call in enumerate(message.tool_calls):
        entry: dict[str, Any] = {"name": call.name, "arguments": _raw_arguments(call)}
        ran_as = proposed.calls[i].id if proposed is not None and i < len(proposed.calls) else ""
        if call.id or ran_as:
            entry["id"] = call.id or ran_as  # a provider that sent no id: the id the protocol gave the call
        calls.append(entry)
    if calls:
        item["tool_calls"] = calls
    return item


def _raw_arguments(call: ToolCall) -> str:
    """The arguments as the model sent them; the decoded object instead if someone edited only that."""
    if call.arguments is None:
        return call.raw_arguments
    try:
        same = (json.loads(call.raw_arguments) if call.raw_arguments.strip() else {}) == call.arguments
    except ValueError:
        same = False
    return call.raw_arguments if same else json.dumps(call.arguments, ensure_ascii=False)


class ReplayProvider(NoModel):
    """The recorded replies played back through the ScriptedProvider, and the recorded provider errors raised
    again at the same request."""

    name = "replay"

    def __init__(self, outcomes: list[dict[str, Any] | errors.CliAgentError]) -> None:
        self.outcomes = deque(outcomes)
        self._script = ScriptedProvider([o for o in outcomes if isinstance(o, dict)], name="replay")

    def stream(self, request: Any) -> Any:
        outcome = self.outcomes.popleft() if self.outcomes else None
        if isinstance(outcome, errors.CliAgentError):
            raise outcome
        return self._script.stream(request)


class RecordedApprover:
    """The recorded answer for each call of one run (whoever gave it: the user, the mode, --yes); the last one when
    a call was asked twice (a command, then its changes). A call in `played` (played back from the trace, not run)
    that the recording never asked about goes ahead; any other call the recording has no answer for is denied."""

    def __init__(self, run: list[Event], played: set[str] | None = None) -> None:
        decided = [e for e in map(_unnested, run) if isinstance(e, ApprovalDecided)]  # a sub-task's too
        self.answers = {e.call_id: Answer(e.decision, e.feedback) for e in decided}
        self.played = played or set()

    def __call__(self, asked: ApprovalAsked) -> Answer:
        default = Decision.YES if asked.call.id in self.played else Decision.NO
        return self.answers.get(asked.call.id, Answer(default))

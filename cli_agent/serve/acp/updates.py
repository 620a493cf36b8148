"""How cli-agent's events and messages look as ACP session updates: one table for each mapping.

A proposed call is a `tool_call` (its kind and the files it touches); an approval question carries the change's
diff, or a command's whole change set; a result is a `tool_call_update` with its status, the diffs it wrote or the
command's output, and the envelope as `rawOutput`. A run's stop reason becomes the turn's. A resumed conversation
replays as the same updates.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from acp import schema

from cli_agent.contracts import (
    ApprovalAsked,
    Change,
    Decision,
    HookRan,
    Message,
    PlanUpdated,
    RunFinished,
    StopReason,
    ToolCall,
    ToolResult,
)
from cli_agent.tools import Registry

if TYPE_CHECKING:
    from cli_agent.tools import Registry

Update = (schema.AgentMessageChunk | schema.UserMessageChunk | schema.ToolCallStart | schema.ToolCallProgress
          | schema.AvailableCommandsUpdate | schema.CurrentModeUpdate)

# The four answers a client offers for an approval question, and the decision each one is. "Allow always" writes
# the [[permissions]] rule that allows the like of the call to the user's own rules for the project (in the user
# state dir) and holds at once. "Reject always" is a plain denial here; the session also refuses that tool without
# asking again (`turn.Turn`).
PERMISSION_OPTIONS = [
    schema.PermissionOption(option_id="allow_once", name="Allow", kind="allow_once"),
    schema.PermissionOption(option_id="allow_always", name="Always allow (a rule for this project)",
                            kind="allow_always"),
    schema.PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    schema.PermissionOption(option_id="reject_always", name="Reject this tool for the session",
                            kind="reject_always"),
]
ANSWERS: dict[str, Decision] = {"allow_once": Decision.YES, "allow_always": Decision.ALWAYS,
                                "reject_once": Decision.NO, "reject_always": Decision.NO}

# A run's stop reason as the turn's; None: the turn failed, and the prompt request gets a JSON-RPC error.
_STOPS: dict[StopReason, schema.StopReason | None] = {
    StopReason.DONE: "end_turn", StopReason.DENIED: "end_turn", StopReason.CHANGE_FAILED: "end_turn",
    StopReason.UNUSABLE: "end_turn", StopReason.TIMEOUT: "end_turn", StopReason.STEP_LIMIT: "max_turn_requests",
    StopReason.CANCELLED: "cancelled", StopReason.INTERRUPTED: "cancelled", StopReason.TERMINATED: "cancelled",
    StopReason.TESTS_FAILED: "end_turn", StopReason.ERROR: None, StopReason.USAGE: None,
    StopReason.UNVERIFIED: "end_turn",
}


def stop_reason(finished: RunFinished, finish_reason: str, warning: str) -> schema.StopReason | None:
    """The turn's stop reason: the run's, refined by the last reply's finish reason (cut at the model's token limit,
    or refused by its content filter) and by the warning before a step-limit stop (the token budget)."""
    if finished.stop_reason is StopReason.STEP_LIMIT and warning == "budget":
        return "max_tokens"
    if finished.stop_reason is StopReason.DONE and finish_reason == "length":
        return "max_tokens"
    if finished.stop_reason is StopReason.DONE and finish_reason == "content_filter":
        return "refusal"
    return _STOPS[finished.stop_reason]


def plans(tool: str, registry: Registry | None = None) -> bool:
    """Whether a call of `tool` sets the plan: it is sent as the `plan` update only, never as a tool card."""
    for known in (registry, Registry.builtin()):
        if known is not None and tool in known:
            return known.get(tool).updates_plan
    return False


def tool_kind(tool: str, registry: Registry | None = None) -> schema.ToolKind:
    """The protocol's kind of a tool, as its spec says: the session's `registry` (its MCP tools too), else the
    built-in tools; "other" for a tool neither knows."""
    for known in (registry, Registry.builtin()):
        if known is not None and tool in known:
            return known.get(tool).kind  # type: ignore[return-value]  # the spec loader allows only ToolKind's
    return "other"


def text_chunk(text: str, *, user: bool = False) -> schema.AgentMessageChunk | schema.UserMessageChunk:
    block = schema.TextContentBlock(type="text", text=text)
    if user:
        return schema.UserMessageChunk(session_update="user_message_chunk", content=block)
    return schema.AgentMessageChunk(session_update="agent_message_chunk", content=block)


def plan_update(event: PlanUpdated) -> schema.AgentPlanUpdate:
    """The model's checklist (update_plan) as the protocol's `plan` update: the whole list each time."""
    return schema.AgentPlanUpdate(session_update="plan", entries=[
        schema.PlanEntry(content=str(step.get("step", "")), priority="medium",
                         status=step.get("status", "pending"))  # type: ignore[arg-type]
        for step in event.steps])


def hook_line(event: HookRan) -> str:
    """A hook that ran, in one line for the editor's thoughts."""
    how = "timed out" if event.timed_out else "blocked" if event.blocked else f"exit {event.exit_code}"
    said = (event.stderr or event.stdout).strip().replace("\n", " ")[:300]
    return f"{event.event} hook `{event.command}`: {how}" + (f": {said}" if said else "") + "\n"


def thought_chunk(text: str) -> schema.AgentThoughtChunk:
    """The model's thinking, and what the harness does on its own around it (a retry, a hook), shown apart from
    the answer."""
    return schema.AgentThoughtChunk(session_update="agent_thought_chunk",
                                    content=schema.TextContentBlock(type="text", text=text))


def _absolute(root: Path, path: str) -> str:
    return os.path.normpath(os.path.join(root, path))


def _locations(call: ToolCall, root: Path) -> list[schema.ToolCallLocation]:
    args = call.arguments or {}
    line = args.get("start_line") if isinstance(args.get("start_line"), int) else None
    out = []
    for key in ("path", "new_path"):
        value = args.get(key)
        if isinstance(value, str) and value:
            out.append(schema.ToolCallLocation(path=_absolute(root, value),
                                               line=line if key == "path" and line and line > 0 else None))
    return out


def _title(call: ToolCall) -> str:
    args = call.arguments or {}
    target = next((args[k] for k in ("command", "path", "pattern", "text", "url", "description")
                   if isinstance(args.get(k), str)), "")
    if call.name == "rename_file" and isinstance(args.get("new_path"), str):
        target = f"{target} -> {args['new_path']}"
    return f"{call.name} {target}".strip() if len(target) <= 120 else f"{call.name} {target[:119]}…"


def tool_call_start(call: ToolCall, root: Path, status: schema.ToolCallStatus = "pending",
                    registry: Registry | None = None) -> schema.ToolCallStart:
    return schema.ToolCallStart(session_update="tool_call", tool_call_id=call.id, title=_title(call),
                                kind=tool_kind(call.name, registry), status=status, locations=_locations(call, root),
                                raw_input=call.arguments if call.arguments is not None else call.raw_arguments)


def _diff(change: Change, root: Path) -> schema.FileEditToolCallContent:
    old = change.text(change.before) if change.before is not None else None
    return schema.FileEditToolCallContent(type="diff", path=_absolute(root, change.path), old_text=old,
                                          new_text=change.text(change.after))


def _diffs(changes: Iterable[Change | None], root: Path) -> list[schema.FileEditToolCallContent]:
    return [_diff(change, root) for change in changes if change is not None]


def _text(text: str) -> schema.ContentToolCallContent:
    return schema.ContentToolCallContent(type="content", content=schema.TextContentBlock(type="text", text=text))


def permission_call(asked: ApprovalAsked, root: Path, registry: Registry | None = None) -> schema.ToolCallUpdate:
    """The call an approval question is about, with what it would write: one diff, or a command's change set."""
    content: list[Any] = _diffs((asked.change, *asked.changes), root)
    content += [_text(f"! {w}") for w in asked.change.warnings] if asked.change is not None else []
    if asked.about:
        content.append(_text(asked.about))
    return schema.ToolCallUpdate(tool_call_id=asked.call.id, title=_title(asked.call),
                                 kind=tool_kind(asked.call.name, registry), status="pending",
                                 content=content or None, locations=_locations(asked.call, root))


def command_output(call_id: str, output: str) -> schema.ToolCallProgress:
    """A running command's output so far (a tool call's content replaces the previous one)."""
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status="in_progress",
                                   content=[_text(fenced(output))])


def fenced(text: str) -> str:
    """Text in a Markdown code fence longer than any run of backticks inside it."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip(chr(10))}\n{fence}"


def result_update(result: ToolResult, root: Path) -> schema.ToolCallProgress:
    """A call's outcome: completed or failed; the diffs it wrote, a command's output, the text of a file read, or
    the errors."""
    envelope = result.envelope
    content: list[Any] = _diffs((result.change, *result.changes), root)
    data = envelope.data if isinstance(envelope.data, dict) else {}
    if result.tool == "run_command" and isinstance(data.get("output"), str):
        code = data.get("exit_code")
        content.append(_text(fenced(data["output"]) + (f"\nexit code {code}" if code is not None else "")))
    elif result.tool == "read_file" and isinstance(data.get("content"), str):  # the file's text, as it is shown
        content.append(_text(fenced(data["content"]) + (f"\n{data['notice']}" if data.get("notice") else "")))
    content += [_text(f"! {w}") for w in envelope.warnings]
    if not envelope.ok:
        content.append(_text("; ".join(envelope.errors)))
    status: Status = "in_progress" if started_in_background(result) else "completed" if envelope.ok else "failed"
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=result.call_id, status=status,
                                   content=content or None, raw_output=envelope.to_dict())


Status = Literal["pending", "in_progress", "completed", "failed"]  # a tool call's


def started_in_background(result: ToolResult) -> int | None:
    """The process a `run_command` call started in the background and left running (its tool call stays open)."""
    data = result.envelope.data if isinstance(result.envelope.data, dict) else {}
    number = data.get("process")
    if result.tool == "run_command" and data.get("running") is True and isinstance(number, int):
        return number
    return None


def not_run(call_id: str, why: str) -> schema.ToolCallProgress:
    """A call the run ended without running (it was denied, or came after a denial or a stop)."""
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status="failed",
                                   content=[_text(f"not run: {why}")])


def history_updates(messages: Iterable[Message], root: Path, registry: Registry | None = None) -> list[Update]:
    """A conversation replayed as the updates its turns sent: the user's messages, the answers, each tool call
    and its result."""
    out: list[Update] = []
    for message in messages:
        if message.role == "user" and message.content:
            out.append(text_chunk(message.content, user=True))
        elif message.role == "assistant":
            if message.content:
                out.append(text_chunk(message.content))
            out.extend(tool_call_start(call, root, "in_progress", registry) for call in message.tool_calls)
        elif message.role == "tool" and message.tool_call_id:
            ok = _envelope_ok(message.content or "")
            out.append(schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=message.tool_call_id,
                                               status="completed" if ok else "failed"))
    return out


def _envelope_ok(text: str) -> bool:
    try:
        data = json.loads(text)
    except ValueError:
        return True
    return not isinstance(data, dict) or data.get("ok") is not False

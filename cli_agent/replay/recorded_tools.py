"""MCP tools in a replay: no live server, the results the trace recorded, in the order they came.

A replay runs the recorded session again against a copy of the workspace; a server's answers are not part of the
workspace and a live server could answer differently, so every MCP tool the trace called is offered again with a
handler that plays that tool's recorded envelopes back, one per call. Whether it asked for approval is taken from
the recording too (an approval event for one of its calls), so the replayed approvals line up.
"""

from __future__ import annotations

from collections import deque
from typing import Any

from cli_agent.contracts import ApprovalDecided, Envelope, ToolCallsProposed, ToolResult
from cli_agent.history import Trace
from cli_agent.mcp import category_for, split_name
from cli_agent.tools import Registry, ToolSpec


class RecordedResults:
    """`handler(ctx, **arguments)` answering with one tool's recorded envelopes, in order (an MCP tool's, or in a
    replay a command's, which is played back rather than run)."""

    def __init__(self, tool: str, envelopes: list[Envelope]) -> None:
        self.tool = tool
        self.envelopes = deque(envelopes)
        self.__name__ = self.__qualname__ = tool

    def __call__(self, ctx: Any, **arguments: Any) -> Envelope:
        if not self.envelopes:
            return Envelope.failure(f"{self.tool}: the trace holds no further result of this tool (replay)")
        return self.envelopes.popleft()


def with_recorded_tools(base: Registry, trace: Trace) -> Registry:
    """`base` plus every MCP tool the trace called, answering from the trace; `base` itself when there is none."""
    results: dict[str, list[Envelope]] = {}
    asked: set[str] = set()
    tool_of: dict[str, str] = {}
    for event in trace.events:
        if isinstance(event, ToolCallsProposed):
            tool_of.update({call.id: call.name for call in event.calls})
        elif isinstance(event, ToolResult) and event.tool not in base and split_name(event.tool):
            results.setdefault(event.tool, []).append(event.envelope)
        elif isinstance(event, ApprovalDecided) and event.call_id in tool_of:
            asked.add(tool_of[event.call_id])
    for name in asked:
        if name not in base and split_name(name):
            results.setdefault(name, [])
    if not results:
        return base
    specs, handlers = base.specs(), {name: base.handler(name) for name in base.names() if base.has_handler(name)}
    for name, envelopes in sorted(results.items()):
        server, _ = split_name(name) or ("", "")
        specs.append(ToolSpec(name=name, category=category_for(server), description="An MCP tool, replayed from "
                              "the trace.", requires_approval=name in asked, mutates=False, kind="other", verb=name,
                              parameters={"type": "object"}))
        handlers[name] = RecordedResults(name, envelopes)
    return Registry(specs, handlers)

"""`cli-agent mcp serve [-C DIR]`: cli-agent's own sandboxed file tools, offered to another MCP client over stdio.

The tools are the built-in Explore and Edit ones, with the same specs (names, descriptions, JSON Schemas) the model
gets, and every call takes the same path as the model's: the dispatcher validates it, the approval policy
(`assess`) decides, the sandbox confines it to the workspace and refuses locked and protected paths, and every
change is recorded in the undo journal first (`cli-agent undo` reverts it). Nobody can be asked over stdio, so the
semantics are headless: a call that needs approval is refused, with the reason, unless the server was started
with `--yes` or an approval mode (`--approval edits|all`, or `approval` in config) that allows it.

A result is the envelope: as JSON text for any client, as structured content for those that read it, and
`isError` when it failed.
"""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any

from mcp_types import CallToolResult, ListToolsResult, TextContent, Tool, ToolAnnotations

from cli_agent import __version__
from cli_agent.agent import Verdict, assess, facts_of
from cli_agent.contracts import Envelope, ToolCall
from cli_agent.session import assemble, policy_for

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.history import Journal
    from cli_agent.tools import Dispatcher, ToolSpec

__all__ = ["serve_stdio"]

SERVED_CATEGORIES = ("Explore", "Edit")


class FileToolServer:
    """The tools and how one call is answered, without any transport (so it is testable on its own)."""

    def __init__(self, settings: Settings) -> None:
        # every change journaled first; no commands: run_command is not among the served tools
        parts = assemble(settings, journal=True, commands=False)
        assert parts.journal is not None
        self.journal: Journal = parts.journal
        registry = parts.registry
        self.specs: list[ToolSpec] = [s for s in registry.specs() if s.category in SERVED_CATEGORIES
                                      and s.exposed_to_model and registry.has_handler(s.name)]
        # no conversation here, so no file counts as read: edits are not held to a read first
        self.dispatcher: Dispatcher = parts.dispatcher(track_reads=False, allowed=[s.name for s in self.specs])
        self.policy = policy_for(settings, interactive=False)  # nobody can be asked over stdio
        self.root = parts.workspace.root

    def call(self, name: str, arguments: dict[str, Any] | None) -> Envelope:
        """One call: validated, assessed, run (a change journaled first), as an envelope; never an exception."""
        call = ToolCall(id=f"mcp-{uuid.uuid4().hex[:12]}", name=name, arguments=arguments if arguments is not None
                        else {}, raw_arguments=json.dumps(arguments or {}, ensure_ascii=False))
        prepared = self.dispatcher.prepare(call)
        if prepared.error is not None or prepared.spec is None:
            return prepared.error or Envelope.failure(f"unknown tool {name!r}")
        verdict = assess(facts_of(prepared), self.policy)
        if verdict.verdict is not Verdict.ALLOW:
            return Envelope.failure(f"denied: {name} needs approval and this server cannot ask anyone; start "
                                    f"`cli-agent mcp serve` with {verdict.rule} to allow it")
        if prepared.change is not None:
            self.journal.begin_turn("mcp-serve")
        return self.dispatcher.execute(prepared)



def _tool(spec: ToolSpec) -> Any:
    annotations = ToolAnnotations(read_only_hint=not spec.mutates, destructive_hint=spec.destructive,
                                  idempotent_hint=not spec.mutates, open_world_hint=False)
    return Tool(name=spec.name, description=spec.description, input_schema=spec.parameters, annotations=annotations)


def _result(envelope: Envelope) -> Any:
    return CallToolResult(content=[TextContent(type="text", text=envelope.to_json())],
                          structured_content=envelope.to_dict(), is_error=not envelope.ok)


def serve_stdio(settings: Settings) -> int:
    """Serve until the client closes stdin."""
    import anyio  # deferred: the MCP SDK's event loop, only for `mcp serve`
    from mcp.server.lowlevel import Server  # deferred: the MCP SDK, only when a server is configured or served
    from mcp.server.stdio import stdio_server

    tools = FileToolServer(settings)

    async def list_tools(ctx: Any, params: Any) -> Any:
        return ListToolsResult(tools=[_tool(spec) for spec in tools.specs])

    async def call_tool(ctx: Any, params: Any) -> Any:
        envelope = await anyio.to_thread.run_sync(tools.call, params.name, params.arguments)
        return _result(envelope)

    server: Any = Server("cli-agent", version=__version__, on_list_tools=list_tools, on_call_tool=call_tool,
                         instructions=f"File tools confined to the workspace {tools.root}; paths are relative to "
                                      "it. Changes are journaled: `cli-agent undo` reverts them.")

    async def main() -> None:
        async with stdio_server() as (read, write):
            await server.run(read, write, server.create_initialization_options())

    anyio.run(main)
    return 0

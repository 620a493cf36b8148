"""`cli-agent tools`, `prompt`, `workflows` and `skills`: what the model and the user are given."""

from __future__ import annotations

import dataclasses
import shutil
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import UsageError, errors, escape_for_terminal, json_for_output
from cli_agent.instructions import load_skills
from cli_agent.prompt import Planner, planned_protocol
from cli_agent.session import assemble, default_provider_factory
from cli_agent.tools import Registry
from cli_agent.ui.headless.printers import warn

if TYPE_CHECKING:
    from rich.console import Console, RenderableType
    from rich.text import Text

    from cli_agent.config import Settings
    from cli_agent.tools import Registry, ToolSpec

__all__ = ["list_skills", "list_workflows", "print_prompt", "print_tools"]


def print_tools(*, as_json: bool, verbose: bool = False, name: str | None = None,
                console: Console | None = None) -> None:
    """`cli-agent tools`: one line per tool, by category, cut to the width; `verbose` (or `name`, one tool) adds
    the description, when to use it and every parameter, wrapped to the width."""
    registry = Registry.builtin()
    if name is not None and name not in registry.names():
        raise UsageError(f"unknown tool {name!r}; the tools are: {', '.join(registry.names())}")
    specs = [registry.get(name)] if name is not None else registry.specs()
    if as_json:
        sys.stdout.write(json_for_output([dataclasses.asdict(spec) for spec in specs], indent=2) + "\n")
        return
    from rich.console import Console  # deferred, as Rich is in each function here: not on a one-shot run's path
    from rich.text import Text  # deferred: Rich is not on a one-shot run's path

    out = console or Console(highlight=False)
    if name is not None or verbose:
        for spec in specs:
            out.print(tool_details(spec))
        return
    column = max(len(spec.name) for spec in specs) + 1
    for category in registry.categories():
        out.print(Text(category, style="bold"))
        for spec in registry.by_category(category):
            out.print(tool_line(spec, column), no_wrap=True, overflow="ellipsis")
    out.print(Text("cli-agent tools NAME (or --verbose) shows the parameters;", style="dim"))
    out.print(Text("* asks before it runs", style="dim"))


def tool_line(spec: ToolSpec, column: int = 13) -> Text:
    """`  read_file     Read a text file of the workspace…` (`*` when it asks before running), the descriptions
    starting at `column` after the indent (one column for every tool listed)."""
    from rich.text import Text  # deferred: Rich is not on a one-shot run's path

    line = Text("  ")
    line.append(f"{spec.name:<{column}}" if len(spec.name) < column else spec.name + " ", style="cyan")
    line.append("*" if spec.requires_approval else " ", style="yellow")
    line.append(" " + spec.description.split(". ")[0].rstrip("."))
    if spec.optional:
        line.append(" (optional)", style="dim")
    return line


def tool_details(spec: ToolSpec) -> RenderableType:
    """One tool in full: what it is for and its parameters, each wrapped under its own indent."""
    from rich.console import Group  # deferred: Rich is not on a one-shot run's path
    from rich.padding import Padding
    from rich.text import Text

    head = Text.assemble((spec.name, "bold cyan"), (f"  {spec.category}", "dim"),
                         ("  · asks before it runs" if spec.requires_approval else "", "yellow"),
                         ("  · optional" if spec.optional else "", "dim"))
    parts: list[RenderableType] = [head, Padding(Text(spec.description), (0, 0, 0, 2))]
    if spec.when_to_use:
        parts.append(Padding(Text("When: " + spec.when_to_use, style="dim"), (0, 0, 0, 2)))
    required = spec.required_params()
    for param, schema in spec.parameters.get("properties", {}).items():
        kind = schema.get("type", "")
        if "enum" in schema:
            kind = " | ".join(map(str, schema["enum"]))
        line = Text.assemble((param, "bold"), f" ({kind}{', required' if param in required else ''})",
                             (" " + schema.get("description", ""), ""))
        parts.append(Padding(line, (0, 0, 0, 4)))
    parts.append(Text(""))
    return Group(*parts)


def print_prompt(settings: Settings, *, task: str, as_json: bool) -> None:
    # the plan a run would make, so the fingerprint matches the trace's: the same model default, protocol and tools
    parts = assemble(dataclasses.replace(settings, no_tools=False), writes=False)
    settings, workspace, registry = parts.settings, parts.workspace, parts.registry
    protocol = planned_protocol(settings, lambda: _supports_native_tools(settings))
    planner = Planner(settings, _with_mcp_tools(settings, registry), workspace, protocol)
    plan, built = planner.plan(task, None)
    read = planner.instructions()
    if as_json:
        tools = list(built.schemas) if built is not None else []
        out = {"protocol": protocol, "system": plan.system, "tools": tools, "options": plan.options,
               "fingerprint": plan.fingerprint, "instructions": list(read.files)}
        sys.stdout.write(json_for_output(out, indent=2) + "\n")
    else:
        sys.stdout.write(escape_for_terminal(plan.system or "") + "\n")
        said = ", ".join(read.files) if read else "none"
        sys.stderr.write(f"cli-agent: instruction files read: {escape_for_terminal(said)}\n")
        for note in (read.note, *load_skills(workspace.root).notes):
            if note:
                sys.stderr.write(f"cli-agent: {escape_for_terminal(note)}\n")


def _with_mcp_tools(settings: Settings, registry: Registry) -> Registry:
    """The registry with the tools of the configured MCP servers (started, listed and stopped again); a server
    that fails is named on stderr."""
    from cli_agent.mcp import McpAttachment  # deferred: the MCP client (asyncio, the SDK) only with servers

    if not any(server.enabled for server in settings.mcp_servers.values()):
        return registry

    attached = McpAttachment(settings.mcp_servers, registry)
    try:
        attached.start()
        registry, notes = attached.registry(wait=attached.hub.start_limit())
    finally:
        attached.close()
    for note in notes:
        sys.stderr.write(f"cli-agent: {escape_for_terminal(note)}\n")
    return registry


def _supports_native_tools(settings: Settings) -> bool:
    """What `protocol = "auto"` asks the provider; with no model to ask, native."""
    if not settings.model:
        return True
    provider = default_provider_factory(settings)
    try:
        return provider.supports_native_tools()
    finally:
        provider.close()


def list_workflows(settings: Settings, *, check: bool, trusted: bool | None = None) -> int:
    """`cli-agent workflows`: the list on stdout, broken files on stderr; with `check`, exit 2 if any is broken."""
    from cli_agent.workflows import load_workflows, render_catalog  # deferred: not on a one-shot run's path

    catalog = load_workflows(settings.workspace, trusted=trusted)
    if catalog.workflows:


        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        sys.stdout.write(escape_for_terminal(render_catalog(catalog, width)) + "\n")
    if check:
        sys.stdout.write(f"{len(catalog.workflows)} workflow(s) load.\n")
    sys.stdout.flush()
    warn(catalog.errors, "broken workflow file: ")
    if check and catalog.errors:
        raise errors.WorkflowError(f"{len(catalog.errors)} workflow file(s) are broken (listed above)")
    return 0


def list_skills(settings: Settings, *, as_json: bool = False, trusted: bool | None = None) -> int:
    """`cli-agent skills`: each skill with its description and folder (an untrusted folder's said so), the
    malformed ones on stderr; a workflow of the same name wins `/NAME`, and says so."""
    found = load_skills(Path(settings.workspace), trusted=trusted)
    if as_json:
        out = [{"name": s.name, "description": s.description, "folder": str(s.folder), "place": s.place,
                "trusted": s.trusted} for s in found.skills.values()]
        sys.stdout.write(json_for_output({"skills": out, "notes": found.notes}, indent=2) + "\n")
        return 0
    lines = [f"{s.name}\n    {s.description}\n    from {s.origin}: {s.folder}" for s in found.skills.values()]
    sys.stdout.write(escape_for_terminal("\n".join(lines) if lines else "no skills") + "\n")
    sys.stdout.flush()
    warn(found.notes, "")
    return 0

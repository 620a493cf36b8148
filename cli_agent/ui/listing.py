"""`cli-agent tools`, `cli-agent prompt` and `cli-agent workflows`: what the model and the user are given."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.registry import Registry

__all__ = ["list_workflows", "print_prompt", "print_tools"]


def print_tools(*, as_json: bool) -> None:
    from cli_agent.registry import Registry

    registry = Registry.builtin()
    if as_json:
        specs = [spec.model_dump(mode="json") for spec in registry.specs()]
        sys.stdout.write(json.dumps(specs, indent=2, ensure_ascii=False) + "\n")
        return
    from rich.console import Console
    from rich.table import Table

    table = Table(title="Tools the model can use", show_lines=False)
    for column in ("tool", "category", "kind", "approval", "parameters", "description"):
        table.add_column(column, overflow="fold")
    for category in registry.categories():
        for spec in registry.by_category(category):
            params = ", ".join(p + ("" if p in spec.required_params() else "?")
                               for p in spec.parameters.get("properties", {}))
            table.add_row(spec.name, category, "optional" if spec.optional else "required",
                          "asks" if spec.requires_approval else "-", params, spec.description.split(". ")[0])
    Console().print(table)


def print_prompt(settings: Settings, *, task: str, as_json: bool) -> None:
    from cli_agent.facts import workspace_for
    from cli_agent.prompt_plan import Planner, planned_protocol
    from cli_agent.providers.local import default_to_local
    from cli_agent.registry import Registry

    # the plan a run would make, so the fingerprint matches the trace's: the same model default and protocol
    settings, _ = default_to_local(settings.model_copy(update={"no_tools": False}))
    protocol = planned_protocol(settings, lambda: _supports_native_tools(settings))
    planner = Planner(settings, _with_mcp_tools(settings, Registry.builtin()), workspace_for(settings), protocol)
    plan, built = planner.plan(task, None)
    if as_json:
        tools = list(built.schemas) if built is not None else []
        out = {"protocol": protocol, "system": plan.system, "tools": tools, "options": plan.options,
               "fingerprint": plan.fingerprint}
        sys.stdout.write(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write((plan.system or "") + "\n")


def _with_mcp_tools(settings: Settings, registry: Registry) -> Registry:
    """The registry with the tools of the configured MCP servers (started, listed and stopped again); a server
    that fails is named on stderr."""
    if not any(server.enabled for server in settings.mcp_servers.values()):
        return registry
    from cli_agent.mcp.attach import McpAttachment
    from cli_agent.ui.escape import escape_for_terminal

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
    from cli_agent.session import default_provider_factory

    if not settings.model:
        return True
    provider = default_provider_factory(settings)
    try:
        return provider.supports_native_tools()
    finally:
        provider.close()


def list_workflows(settings: Settings, *, check: bool) -> int:
    """`cli-agent workflows`: the list on stdout, broken files on stderr; with `check`, exit 2 if any is broken."""
    from cli_agent import errors
    from cli_agent.ui.escape import escape_for_terminal
    from cli_agent.ui.headless import warn
    from cli_agent.workflow_run import render_catalog
    from cli_agent.workflows import load_workflows

    catalog = load_workflows(settings.workspace)
    if catalog.workflows:
        sys.stdout.write(escape_for_terminal(render_catalog(catalog)) + "\n")
    if check:
        sys.stdout.write(f"{len(catalog.workflows)} workflow(s) load.\n")
    sys.stdout.flush()
    warn(catalog.errors, "broken workflow file: ")
    if check and catalog.errors:
        raise errors.WorkflowError(f"{len(catalog.errors)} workflow file(s) are broken (listed above)")
    return 0

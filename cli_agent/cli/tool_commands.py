"""`cli-agent tools` (list, show one, run one through the dispatcher), `prompt`, `workflows` and `workflow run`:
what the model is offered, and the workflows that drive it.

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

from typing import Annotated, Any

import typer
import typer.core

from cli_agent.cli.flags import AsJson, ConfigFile, Model, Output, Protocol, Workspace, Yes, factory, load, trust_flag
from cli_agent.ui.headless import list_skills, list_workflows, print_prompt, print_tools, run_tool, run_workflow_command


class _ToolsGroup(typer.core.TyperGroup):
    """`cli-agent tools NAME` shows that tool: a name that is not a subcommand goes to the hidden `show`."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["show", *args]
        return super().resolve_command(ctx, args)


tools_app = typer.Typer(help="List the tools (tools NAME: one in full), or run one through the dispatcher.",
                        invoke_without_command=True, cls=_ToolsGroup)
workflow_app = typer.Typer(help="Run a workflow (list them with `cli-agent workflows`).")


@tools_app.callback()
def tools_list(ctx: typer.Context, as_json: AsJson = False,
               verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Every tool in full.")] = False) -> int:
    """List the tools the model can use, by category: one line each."""
    if ctx.invoked_subcommand is not None:
        return 0

    load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    print_tools(as_json=as_json, verbose=verbose)
    return 0


@tools_app.command("show", hidden=True)
def tools_show(name: str, as_json: AsJson = False) -> int:
    """One tool in full: its description, when to use it, its parameters."""
    print_tools(as_json=as_json, name=name)
    return 0


@tools_app.command("run")
def tools_run(ctx: typer.Context, name: str, json_args: Annotated[str, typer.Argument(help="The arguments, a JSON "
                                                                                         "object.")] = "{}",
              workspace: Workspace = None, yes: Yes = None, config: ConfigFile = None) -> int:
    """Run one tool call through the dispatcher and the approval policy; print its envelope as JSON."""
    loaded = load(ctx, workspace=workspace, yes=yes, config=config)
    return run_tool(loaded.settings, name, json_args)


def prompt_cmd(ctx: typer.Context,
               as_json: Annotated[bool, typer.Option("--json", help="Add the schemas, options, fingerprint.")] = False,
               protocol: Protocol = None, task: Annotated[str, typer.Option("--task", help="The task text that "
                                                                            "selects optional tools.")] = "",
               workspace: Workspace = None, model: Model = None, config: ConfigFile = None) -> int:
    """Print the enhanced system prompt built from the tool specs."""
    loaded = load(ctx, protocol=protocol, workspace=workspace, model=model, config=config)
    print_prompt(loaded.settings, task=task, as_json=as_json)
    return 0


def workflows_list(ctx: typer.Context,
                   check: Annotated[bool, typer.Option("--check", help="Validate every workflow file; exit 2 if "
                                                                        "any is broken.")] = False,
                   workspace: Workspace = None, config: ConfigFile = None) -> int:
    """List the workflows by category: parameters, the file each comes from, and what it shadows."""
    return list_workflows(load(ctx, workspace=workspace, config=config).settings, check=check,
                          trusted=trust_flag(ctx))


def skills_list(ctx: typer.Context, as_json: AsJson = False, workspace: Workspace = None,
                config: ConfigFile = None) -> int:
    """List the skills (SKILL.md folders of the project and the user) with their folders."""
    return list_skills(load(ctx, workspace=workspace, config=config).settings, as_json=as_json,
                       trusted=trust_flag(ctx))


@workflow_app.command("run")
def workflow_run(ctx: typer.Context, name: str,
                 args: Annotated[list[str] | None, typer.Argument(help="Parameters: positional in declared order, "
                                                                       "or key=value.")] = None,
                 yes: Yes = None, output: Output = None, workspace: Workspace = None, model: Model = None,
                 config: ConfigFile = None) -> int:
    """Run the workflow NAME with its parameters; a missing or bad one exits 2 before anything runs."""
    loaded = load(ctx, yes=yes, output=output, workspace=workspace, model=model, config=config)
    return run_workflow_command(loaded.settings, name, args or [], provider_factory=factory(ctx),
                                notes=loaded.notes, trusted=trust_flag(ctx))

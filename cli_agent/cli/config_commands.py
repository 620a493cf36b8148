"""`cli-agent config show|path`, `facts` (list, commit, reject) and `trust`: what the project is set to and what
it says of itself, and whether its config is trusted. The wording of each is its package's (`config/`, `facts/`).

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from cli_agent.cli.flags import AsJson, ConfigFile, Workspace, load, root_flag
from cli_agent.config import render_paths, render_show, trusted_folders
from cli_agent.contracts import errors, escape_for_terminal, flags_given, json_for_output
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.facts import FactStore, list_json, render_list
from cli_agent.prompt import shown

config_app = typer.Typer(help="Show the effective configuration or the files it is read from.")
facts_app = typer.Typer(help="Project facts: list them with the pending proposals, commit or reject a proposal.",
                        invoke_without_command=True)


@config_app.command("show")
def config_show(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The effective configuration, each value with where it came from, and the test command runs are verified with."""
    loaded = load(ctx, workspace=workspace, config=config)
    tests = shown(loaded.settings.test_command, loaded.sources["test_command"], Path(loaded.settings.workspace)) \
        if loaded.settings.verify else "# tests: not run after a run's changes (verify = false)"
    typer.echo(escape_for_terminal(render_show(loaded) + "\n" + tests))
    return 0


@config_app.command("path")
def config_path(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The config files read, in the order they are layered."""
    typer.echo(escape_for_terminal(render_paths(load(ctx, workspace=workspace, config=config))))
    return 0


def _fact_store(ctx: typer.Context, workspace: str | None, config: Path | None) -> Any:
    return FactStore(load(ctx, workspace=workspace, config=config).settings.workspace)


def _print_facts(store: Any, as_json: bool) -> None:
    if as_json:
        typer.echo(json_for_output(list_json(store), indent=2))
    else:
        typer.echo(escape_for_terminal(render_list(store)))


@facts_app.callback()
def facts_root(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None,
               as_json: AsJson = False) -> int:
    """List committed facts, pending proposals and locks (the same as `facts list`)."""
    if ctx.invoked_subcommand is not None:  # `facts -C DIR commit ID`: the group's flags hold for its commands
        root = ctx.find_root().obj
        root.flags = dict(root.flags or {}) | flags_given(workspace=workspace, config=config)
        return 0
    _print_facts(_fact_store(ctx, workspace, config), as_json)
    return 0


@facts_app.command("list")
def facts_list(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None,
               as_json: AsJson = False) -> int:
    """List committed facts, pending proposals and locks."""
    _print_facts(_fact_store(ctx, workspace, config), as_json)
    return 0


@facts_app.command("commit")
def facts_commit(ctx: typer.Context, fact_id: Annotated[str, typer.Argument(metavar="ID", help="A pending "
                                                                                             "proposal's ID.")],
                 author: Annotated[str | None, typer.Option("--author", help="Recorded with the fact (default: "
                                                                             "your user name).")] = None,
                 workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Make a pending proposal a project fact: the model sees it as authoritative from the next run on."""
    fact = _fact_store(ctx, workspace, config).commit(fact_id, author)
    typer.echo(escape_for_terminal(f"committed {fact.id}: {fact.text}"))
    return 0


@facts_app.command("reject")
def facts_reject(ctx: typer.Context, fact_id: Annotated[str, typer.Argument(metavar="ID", help="A pending "
                                                                                             "proposal's ID.")],
                 workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Drop a pending proposal."""
    proposal = _fact_store(ctx, workspace, config).reject(fact_id)
    typer.echo(escape_for_terminal(f"rejected {proposal.id}: {proposal.text}"))
    return 0


def trust_cmd(ctx: typer.Context,
              revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting the folder.")] = False,
              list_all: Annotated[bool, typer.Option("--list", help="List the trusted folders.")] = False,
              workspace: Workspace = None) -> int:
    """Trust the folder's project config (.cli-agent/config.toml) as it is now: it may then set every key."""
    if list_all:
        for line in trusted_folders.listing():
            typer.echo(esc(line))
        return 0
    folder = Path(workspace or root_flag(ctx, "workspace") or ".")
    if revoke:
        typer.echo(esc(trusted_folders.revoked_line(folder, trusted_folders.revoke(folder))))
        return 0
    try:
        withheld = load(ctx, announce=False, workspace=str(folder), trust=False).withheld
    except errors.CliAgentError:
        withheld = {}
    typer.echo(esc(trusted_folders.trusted_line(trusted_folders.trust_folder(folder), withheld)))
    return 0

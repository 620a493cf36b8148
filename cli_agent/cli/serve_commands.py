"""`cli-agent mcp` (list and test the configured servers, serve the file tools) and `acp`: cli-agent for other
programs, and the MCP servers it uses.

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

from typing import Annotated

import typer

from cli_agent.cli.flags import AsJson, ConfigFile, Workspace, Yes, load

mcp_app = typer.Typer(help="MCP servers: list the configured ones, test one, or serve cli-agent's file tools.")


@mcp_app.command("list")
def mcp_list(ctx: typer.Context, as_json: AsJson = False, workspace: Workspace = None,
             config: ConfigFile = None) -> int:
    """Start the configured MCP servers and show each one's state and tools."""
    from cli_agent.ui.repl import list_servers  # deferred: the REPL's stack (prompt_toolkit), only for the REPL

    return list_servers(load(ctx, workspace=workspace, config=config), as_json=as_json)


@mcp_app.command("test")
def mcp_test(ctx: typer.Context, name: Annotated[str, typer.Argument(help="A server of [mcp_servers].")],
             workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Start one MCP server (even a disabled one) and list its tools; exit 1 with the reason if it does not start."""
    from cli_agent.ui.repl import test_server  # deferred: the REPL's stack (prompt_toolkit), only for the REPL

    return test_server(load(ctx, workspace=workspace, config=config), name)


@mcp_app.command("serve")
def mcp_serve(ctx: typer.Context, workspace: Workspace = None, yes: Yes = None,
              approval: Annotated[str | None, typer.Option("--approval", help="ask | edits | all: which changes "
                                                                              "run without approval.")] = None,
              config: ConfigFile = None) -> int:
    """Offer the sandboxed file tools over stdio to another MCP client; a change that needs approval is refused
    unless started with --yes or --approval edits|all."""
    from cli_agent.serve import serve_stdio  # deferred: the MCP server, only for `cli-agent mcp serve`

    return serve_stdio(load(ctx, workspace=workspace, yes=yes, approval=approval, config=config).settings)


def acp_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Serve the Agent Client Protocol over stdio, for editors (Zed, JetBrains, Toad): each session works in the
    folder the editor gives, with the same config, trust, sandbox and approvals as the CLI. -C DIR: the folder
    whose settings are checked at start (a broken config exits 2 before serving)."""
    from cli_agent.serve.acp import serve  # deferred: the ACP server, only for `cli-agent acp`

    state = ctx.find_root().obj
    load(ctx, workspace=workspace, config=config)  # a broken config exits 2 here, before any client speaks
    if config is not None:
        state.flags = {**(state.flags or {}), "config": config}
    return serve(state)

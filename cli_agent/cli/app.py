"""The command line's Typer app: the root with its flags, and every command registered in one table below (each
group's commands in `cli/*_commands.py`). `cli.main.run` reaches it for everything but a plain `-p` run or REPL
start (which `cli.main` parses itself, without Typer); errors become exit codes in `cli.main.run`, not here.

Commands parse their flags, load the settings, open what they need and hand over to the modules that do the
work. Nothing heavy is imported at module level: `--version` must stay instant.

No `from __future__ import annotations` here, unlike everywhere else: Typer reads every command's annotations at
each start, and real objects spare it evaluating ~100 strings (10 ms, a fortieth of a one-shot run).
"""

from typing import Annotated

import typer

from cli_agent import __version__
from cli_agent.cli import (
    check_commands,
    config_commands,
    permission_commands,
    serve_commands,
    session_commands,
    tool_commands,
)
from cli_agent.cli.flags import (
    ApiBase,
    ApiKey,
    Attempts,
    ConfigFile,
    MaxSteps,
    Model,
    NoTools,
    Output,
    Protocol,
    RequireVerified,
    Timeout,
    TracePath,
    Trust,
    Workspace,
    Yes,
)
from cli_agent.cli.oneshot import run_prompt
from cli_agent.cli.state import resume_from, run_interactive
from cli_agent.contracts import AppState, UsageError, flags_given

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="cli-agent: a terminal coding agent. Run it with no arguments for the REPL, or -p TEXT for "
                       "one task.")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"cli-agent {__version__}")
        raise typer.Exit(0)


@app.callback(invoke_without_command=True)
def root(ctx: typer.Context,
         prompt: Annotated[str | None, typer.Option("--prompt", "-p", help="Run one task and exit; - reads it from "
                                                                           "stdin.")] = None,
         model: Model = None, api_base: ApiBase = None, api_key: ApiKey = None, workspace: Workspace = None,
         yes: Yes = None, protocol: Protocol = None, max_steps: MaxSteps = None, timeout: Timeout = None,
         output: Output = None, trace: TracePath = None, no_tools: NoTools = None, config: ConfigFile = None,
         trust: Trust = None, attempts: Attempts = None, require_verified: RequireVerified = None,
         reasoning_effort: Annotated[str | None, typer.Option("--reasoning-effort", help="low | medium | high: how "
                                                              "hard a reasoning model thinks (as LiteLLM maps it).")
                                     ] = None,
         mode: Annotated[str | None, typer.Option("--mode", help="default | plan | edits | all: what runs "
                                                  "without asking (plan: read only, ends with a plan).")] = None,
         image: Annotated[list[str] | None, typer.Option("--image", help="An image for the task (PNG, JPEG, GIF, "
                                                                          "WebP; repeatable), for a vision model.")
                          ] = None,
         continue_: Annotated[bool, typer.Option("--continue", "-c", help="Continue this workspace's last "
                                                                          "session.")] = False,
         resume: Annotated[str | None, typer.Option("--resume", help="Continue the session ID (see cli-agent "
                                                                      "sessions).")] = None,
         version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                               help="Print the version.")] = False) -> int:
    state: AppState = ctx.obj
    state.flags = flags_given(model=model, api_base=api_base, api_key=api_key, workspace=workspace, yes=yes,
                         protocol=protocol, max_steps=max_steps, timeout=timeout, output=output, trace=trace,
                         no_tools=no_tools, config=config, trust=trust, attempts=attempts,
                         verify="required" if require_verified else None, reasoning_effort=reasoning_effort,
                         mode=mode)
    if ctx.invoked_subcommand is not None:
        return 0
    session = resume_from(continue_, resume)
    if prompt is not None:
        return run_prompt(state, prompt, session, images=image)
    if image:
        raise UsageError("--image goes with -p; in the REPL, name the image in your message: @shot.png")
    return run_interactive(state, session, onboard=model is None and api_base is None and api_key is None)


# -- every command, in the order `--help` lists them (the commands first, then the groups) ---------------------------

for _name, _command in (("prompt", tool_commands.prompt_cmd), ("workflows", tool_commands.workflows_list),
                        ("skills", tool_commands.skills_list),
                        ("trust", config_commands.trust_cmd), ("sandbox", check_commands.sandbox_cmd),
                        ("replay", check_commands.replay_cmd), ("eval", check_commands.eval_cmd),
                        ("sessions", session_commands.sessions_cmd), ("undo", session_commands.undo_cmd),
                        ("acp", serve_commands.acp_cmd)):
    app.command(_name)(_command)
for _name, _group in (("tools", tool_commands.tools_app), ("config", config_commands.config_app),
                      ("workflow", tool_commands.workflow_app), ("facts", config_commands.facts_app),
                      ("local", check_commands.local_app), ("mcp", serve_commands.mcp_app),
                      ("permissions", permission_commands.permissions_app)):
    app.add_typer(_group, name=_name)

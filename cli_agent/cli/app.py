"""The command line's Typer app: every command and its flags. `cli.run` reaches it for everything but a plain
`-p` run (which `cli` parses itself, without Typer); errors become exit codes in `cli.run`, not here.

Commands parse their flags, load the settings, open what they need and hand over to the modules that do the
work. Nothing heavy is imported at module level: `--version` must stay instant.

No `from __future__ import annotations` here, unlike everywhere else: Typer reads every command's annotations at
each start, and real objects spare it evaluating ~100 strings (10 ms, a fortieth of a one-shot run).
"""

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import typer
import typer.core

from cli_agent import __version__
from cli_agent.cli.state import resume_from, run_interactive, run_prompt
from cli_agent.contracts import errors
from cli_agent.session.launch import AppState, flags_given, load_for, provider_factory

__all__ = ["app"]

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="cli-agent: a terminal coding agent. Run it with no arguments for the REPL, or -p TEXT for "
                       "one task.")
class _ToolsGroup(typer.core.TyperGroup):
    """`cli-agent tools NAME` shows that tool: a name that is not a subcommand goes to the hidden `show`."""

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        if args and not args[0].startswith("-") and args[0] not in self.commands:
            args = ["show", *args]
        return super().resolve_command(ctx, args)


tools_app = typer.Typer(help="List the tools (tools NAME: one in full), or run one through the dispatcher.",
                        invoke_without_command=True, cls=_ToolsGroup)
config_app = typer.Typer(help="Show the effective configuration or the files it is read from.")
app.add_typer(tools_app, name="tools")
app.add_typer(config_app, name="config")


# -- the flags; each is also a config key and a CLI_AGENT_<NAME> variable ------------------

Model = Annotated[str | None, typer.Option("--model", "-m", help="A LiteLLM model string (e.g. openai/gpt-4o-mini), "
                                                                "local for the bundled offline model, or "
                                                                "scripted:FILE.json for the scripted provider.")]
ApiBase = Annotated[str | None, typer.Option("--api-base", help="Base URL of an OpenAI-compatible server.")]
ApiKey = Annotated[str | None, typer.Option("--api-key", help="API key (else the provider's usual env var).")]
Workspace = Annotated[str | None, typer.Option("--workspace", "-C", help="The folder the agent works on.")]
Yes = Annotated[bool | None, typer.Option("--yes", "-y", help="Approve every change (protected and locked paths "
                                                               "stay refused).")]
Protocol = Annotated[str | None, typer.Option("--protocol", help="auto | native | json")]
MaxSteps = Annotated[int | None, typer.Option("--max-steps", help="Most model requests in one run (default 20).")]
Timeout = Annotated[float | None, typer.Option("--timeout", help="Seconds one run may take (default 300).")]
Output = Annotated[str | None, typer.Option("--output", "-o", help="text | json | stream-json")]
TracePath = Annotated[str | None, typer.Option("--trace", help="Write the trace here (default: user state dir).")]
NoTools = Annotated[bool | None, typer.Option("--no-tools", help="Plain chat: no tools, no enhanced prompt.")]
ConfigFile = Annotated[Path | None, typer.Option("--config", help="A config file layered over project and user.")]
Attempts = Annotated[int | None, typer.Option("--attempts", help="Candidates judged by the tests when a change "
                                                                "still fails them (default 1).")]
Trust = Annotated[bool | None, typer.Option("--trust", help="Trust this folder's project config for this run "
                                                             "(also CLI_AGENT_TRUST=1); see cli-agent trust.")]
AsJson = Annotated[bool, typer.Option("--json", help="As JSON.")]


def _load(ctx: typer.Context, *, announce: bool = True, **sub_flags: Any) -> Any:
    return load_for(ctx.find_root().obj, announce=announce, **sub_flags)


def _trust_flag(ctx: typer.Context) -> bool | None:
    """True when --trust was given; None: as the environment and the trust store say."""
    return True if (ctx.find_root().obj.flags or {}).get("trust") else None


def _factory(ctx: typer.Context) -> Any:
    return provider_factory(ctx.find_root().obj)


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
         trust: Trust = None, attempts: Attempts = None,
         continue_: Annotated[bool, typer.Option("--continue", "-c", help="Continue this workspace's last "
                                                                          "session.")] = False,
         resume: Annotated[str | None, typer.Option("--resume", help="Continue the session ID (see cli-agent "
                                                                      "sessions).")] = None,
         version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                               help="Print the version.")] = False) -> int:
    state: AppState = ctx.obj
    state.flags = flags_given(model=model, api_base=api_base, api_key=api_key, workspace=workspace, yes=yes,
                         protocol=protocol, max_steps=max_steps, timeout=timeout, output=output, trace=trace,
                         no_tools=no_tools, config=config, trust=trust, attempts=attempts)
    if ctx.invoked_subcommand is not None:
        return 0
    session = resume_from(continue_, resume)
    if prompt is not None:
        return run_prompt(state, prompt, session)
    return run_interactive(state, session, onboard=model is None and api_base is None and api_key is None)


@tools_app.callback()
def tools_list(ctx: typer.Context, as_json: AsJson = False,
               verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Every tool in full.")] = False) -> int:
    """List the tools the model can use, by category: one line each."""
    if ctx.invoked_subcommand is not None:
        return 0
    from cli_agent.ui.headless.listing import print_tools

    _load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    print_tools(as_json=as_json, verbose=verbose)
    return 0


@tools_app.command("show", hidden=True)
def tools_show(name: str, as_json: AsJson = False) -> int:
    """One tool in full: its description, when to use it, its parameters."""
    from cli_agent.ui.headless.listing import print_tools

    print_tools(as_json=as_json, name=name)
    return 0


@tools_app.command("run")
def tools_run(ctx: typer.Context, name: str, json_args: Annotated[str, typer.Argument(help="The arguments, a JSON "
                                                                                         "object.")] = "{}",
              workspace: Workspace = None, yes: Yes = None, config: ConfigFile = None) -> int:
    """Run one tool call through the dispatcher and the approval policy; print its envelope as JSON."""
    from cli_agent.ui.headless.oneshot import run_tool

    loaded = _load(ctx, workspace=workspace, yes=yes, config=config)
    return run_tool(loaded.settings, name, json_args)


@app.command("prompt")
def prompt_cmd(ctx: typer.Context,
               as_json: Annotated[bool, typer.Option("--json", help="Add the schemas, options, fingerprint.")] = False,
               protocol: Protocol = None, task: Annotated[str, typer.Option("--task", help="The task text that "
                                                                            "selects optional tools.")] = "",
               workspace: Workspace = None, model: Model = None, config: ConfigFile = None) -> int:
    """Print the enhanced system prompt built from the tool specs."""
    from cli_agent.ui.headless.listing import print_prompt

    loaded = _load(ctx, protocol=protocol, workspace=workspace, model=model, config=config)
    print_prompt(loaded.settings, task=task, as_json=as_json)
    return 0


@config_app.command("show")
def config_show(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The effective configuration, each value with where it came from."""
    from cli_agent.config.show import render_show
    from cli_agent.contracts.escape import escape_for_terminal

    typer.echo(escape_for_terminal(render_show(_load(ctx, workspace=workspace, config=config))))
    return 0


@config_app.command("path")
def config_path(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The config files read, in the order they are layered."""
    from cli_agent.config.show import render_paths
    from cli_agent.contracts.escape import escape_for_terminal

    typer.echo(escape_for_terminal(render_paths(_load(ctx, workspace=workspace, config=config))))
    return 0


# -- workflows ----------------------------------------------------------------------------------------------------

workflow_app = typer.Typer(help="Run a workflow (list them with `cli-agent workflows`).")
app.add_typer(workflow_app, name="workflow")


@app.command("workflows")
def workflows_list(ctx: typer.Context,
                   check: Annotated[bool, typer.Option("--check", help="Validate every workflow file; exit 2 if "
                                                                        "any is broken.")] = False,
                   workspace: Workspace = None, config: ConfigFile = None) -> int:
    """List the workflows by category: parameters, the file each comes from, and what it shadows."""
    from cli_agent.ui.headless.listing import list_workflows

    return list_workflows(_load(ctx, workspace=workspace, config=config).settings, check=check,
                          trusted=_trust_flag(ctx))


@workflow_app.command("run")
def workflow_run(ctx: typer.Context, name: str,
                 args: Annotated[list[str] | None, typer.Argument(help="Parameters: positional in declared order, "
                                                                       "or key=value.")] = None,
                 yes: Yes = None, output: Output = None, workspace: Workspace = None, model: Model = None,
                 config: ConfigFile = None) -> int:
    """Run the workflow NAME with its parameters; a missing or bad one exits 2 before anything runs."""
    from cli_agent.ui.headless.oneshot import run_workflow_command

    loaded = _load(ctx, yes=yes, output=output, workspace=workspace, model=model, config=config)
    return run_workflow_command(loaded.settings, name, args or [], provider_factory=_factory(ctx),
                                notes=loaded.notes, trusted=_trust_flag(ctx))


# -- facts and locks ----------------------------------------------------------------------------------------------

facts_app = typer.Typer(help="Project facts: list them with the pending proposals, commit or reject a proposal.",
                        invoke_without_command=True)
app.add_typer(facts_app, name="facts")


def _fact_store(ctx: typer.Context, workspace: str | None, config: Path | None) -> Any:
    from cli_agent.facts.store import FactStore

    return FactStore(_load(ctx, workspace=workspace, config=config).settings.workspace)


def _print_facts(store: Any, as_json: bool) -> None:
    from cli_agent.contracts.escape import escape_for_terminal, json_for_output
    from cli_agent.facts.store import render_list

    if as_json:
        out = {"committed": [dataclasses.asdict(f) for f in store.committed()],
               "pending": [dataclasses.asdict(p) for p in store.pending()], "locks": list(store.locks())}
        typer.echo(json_for_output(out, indent=2))
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
    from cli_agent.contracts.escape import escape_for_terminal

    fact = _fact_store(ctx, workspace, config).commit(fact_id, author)
    typer.echo(escape_for_terminal(f"committed {fact.id}: {fact.text}"))
    return 0


@facts_app.command("reject")
def facts_reject(ctx: typer.Context, fact_id: Annotated[str, typer.Argument(metavar="ID", help="A pending "
                                                                                             "proposal's ID.")],
                 workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Drop a pending proposal."""
    from cli_agent.contracts.escape import escape_for_terminal

    proposal = _fact_store(ctx, workspace, config).reject(fact_id)
    typer.echo(escape_for_terminal(f"rejected {proposal.id}: {proposal.text}"))
    return 0


# -- folder trust ---------------------------------------------------------------------------------------------------

@app.command("trust")
def trust_cmd(ctx: typer.Context,
              revoke: Annotated[bool, typer.Option("--revoke", help="Stop trusting the folder.")] = False,
              list_all: Annotated[bool, typer.Option("--list", help="List the trusted folders.")] = False,
              workspace: Workspace = None) -> int:
    """Trust the folder's project config (.cli-agent/config.toml) as it is now: it may then set every key."""
    from cli_agent.config import trusted_folders
    from cli_agent.contracts.escape import escape_for_terminal as esc

    if list_all:
        for entry in trusted_folders.entries():
            state = "" if entry.current else "  (its config changed since: not trusted until trusted again)"
            typer.echo(esc(f"{entry.folder}  config {entry.digest[:12]}{state}"))
        return 0
    folder = Path(workspace or (ctx.find_root().obj.flags or {}).get("workspace") or ".")
    if revoke:
        done = trusted_folders.revoke(folder)
        typer.echo(esc(f"{'no longer trusted' if done else 'was not trusted'}: {folder.resolve()}"))
        return 0
    try:
        withheld = _load(ctx, announce=False, workspace=str(folder), trust=False).withheld
    except errors.CliAgentError:
        withheld = {}
    entry = trusted_folders.trust(folder)
    unlocked = f"; its config may now set {', '.join(withheld)}" if withheld else ""
    typer.echo(esc(f"trusted {entry.folder} (config sha256 {entry.digest[:12]}){unlocked}"))
    return 0


# -- replay, eval and sessions ------------------------------------------------------------------------------------

@app.command("sandbox")
def sandbox_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """What the command sandbox (run_command, !COMMAND) can do here, or why there is none and what would enable
    it. Exit 1 when commands can't run."""
    from cli_agent.contracts.escape import escape_for_terminal
    from cli_agent.ui.view.sandbox_status import sandbox_report

    text, code = sandbox_report(_load(ctx, workspace=workspace, config=config).settings)
    typer.echo(escape_for_terminal(text))
    return code


@app.command("replay")
def replay_cmd(ctx: typer.Context,
               trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="A trace (JSONL) to replay.")],
               output: Annotated[str | None, typer.Option("--output", "-o", help="text | json")] = None,
               run_commands: Annotated[bool, typer.Option(
                   "--run-commands", help="Run the trace's commands in the command sandbox (on the copy) instead "
                                          "of playing their recorded results back.")] = False) -> int:
    """Re-run a recorded session in a copy of its workspace; exit 1 at the first divergence. The trace's commands
    are played back, not run, unless --run-commands."""
    from cli_agent.cli.replay import run_replay

    _load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    return run_replay(trace_file, output or (ctx.find_root().obj.flags or {}).get("output") or "text",
                      run_commands=run_commands)


@app.command("eval")
def eval_cmd(ctx: typer.Context,
             report: Annotated[Path | None, typer.Option("--report", help="Write the JSON report here (default: "
                                                                           "the user state dir).")] = None,
             models: Annotated[str | None, typer.Option("--models", help="Live: compare these models (A,B).")] = None,
             api_base: ApiBase = None,
             markdown: Annotated[Path | None, typer.Option("--markdown", help="Live: also write a Markdown "
                                                                               "table here.")] = None,
             only: Annotated[str | None, typer.Option("--only", help="Run only the scenarios or tasks whose name "
                                                                     "contains this.")] = None,
             suite: Annotated[str, typer.Option("--suite", help="offline (scripted scenarios) or real (real tasks "
                                                                "on real code, graded by tests).")] = "offline",
             model: Annotated[str | None, typer.Option("--model", help="Real suite: the model (default local).")]
             = None,
             protocols: Annotated[str, typer.Option("--protocols", help="Real suite: json, native or "
                                                                        "json,native.")] = "json",
             variants: Annotated[str, typer.Option("--variants", help="Real suite: all, none, -NAME (one harness "
                                                                      "switch off), comma-separated.")] = "all",
             keep: Annotated[Path | None, typer.Option("--keep", help="Real suite: keep each run's trace in this "
                                                                      "folder (TASK.PROTOCOL.VARIANT.trace.jsonl).")]
             = None, attempts: Attempts = None) -> int:
    """Offline: the scripted scenario suite (exit 1 if any fails). Live (--models): real tasks per model.
    --suite real: real tasks on real code, each graded by its own check."""
    from cli_agent.eval import run_eval_command

    _load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    flags = ctx.find_root().obj.flags or {}
    if suite == "real":
        from cli_agent.eval.real_report import run_real_command

        return run_real_command(model=model or flags.get("model") or "local", protocols=protocols,
                                variants=variants, only=only, report=report,
                                api_base=api_base or flags.get("api_base"), keep=keep,
                                attempts=attempts or flags.get("attempts") or 1)
    if suite != "offline":
        raise errors.UsageError(f"--suite is offline or real, not {suite!r}")
    return run_eval_command(report=report, models=models, api_base=api_base or flags.get("api_base"),
                            markdown=markdown, only=only)


@app.command("sessions")
def sessions_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None,
                 as_json: AsJson = False) -> int:
    """This workspace's sessions, last used first; continue one with -c or --resume ID."""
    from cli_agent.ui.repl.commands.session_commands import print_sessions

    return print_sessions(_load(ctx, workspace=workspace, config=config).settings.workspace, as_json=as_json)


# -- undo ---------------------------------------------------------------------------------------------------------

@app.command("undo")
def undo_cmd(ctx: typer.Context,
             turn: Annotated[int | None, typer.Option("--turn", "-t", help="Undo this turn (see --list) instead "
                                                                           "of the newest one.")] = None,
             list_turns: Annotated[bool, typer.Option("--list", help="Show the journal's turns and their "
                                                                     "changes; change nothing.")] = False,
             as_json: Annotated[bool, typer.Option("--json", help="With --list: as JSON.")] = False,
             workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Revert the agent's changes of the newest turn (or --turn N) byte for byte, from the undo journal."""
    from cli_agent.contracts.escape import escape_for_terminal, json_for_output
    from cli_agent.history.journal import Journal
    from cli_agent.history.undo import undo
    from cli_agent.ui.repl.commands.undo_commands import render_turns, turns_json

    journal = Journal(_load(ctx, workspace=workspace, config=config).settings.workspace)
    if list_turns:
        turns = journal.turns()
        typer.echo(json_for_output(turns_json(turns), indent=2) if as_json
                   else escape_for_terminal(render_turns(turns)))
        return 0
    undone = undo(journal, turn)
    typer.echo(escape_for_terminal(f"undid turn {undone.turn}: " + ("; ".join(undone.done) or "nothing left to "
                                                                                             "revert")))
    return 0


# -- the local model ----------------------------------------------------------------------------------------------

local_app = typer.Typer(help="The bundled offline model (--model local).")
app.add_typer(local_app, name="local")


@local_app.command("status")
def local_status(ctx: typer.Context,
                 rehash: Annotated[bool, typer.Option("--verify", help="Hash the model file again.")] = False,
                 local_model: Annotated[str | None, typer.Option("--local-model", help="qwen2.5-coder-1.5b | "
                                                                 "smollm2-135m | PATH.gguf")] = None,
                 config: ConfigFile = None) -> int:
    """The local model: its file, size, sha256 check, and whether the runtime is installed."""
    from cli_agent.providers.local_model import model_status, resolve_model

    loaded = _load(ctx, local_model=local_model, config=config)
    status = model_status(resolve_model(loaded.settings.local.model), rehash=rehash)
    from cli_agent.contracts.escape import escape_for_terminal

    typer.echo(escape_for_terminal("\n".join(status.lines())))
    if not status.ok:
        raise errors.UsageError(status.check)
    return 0


# -- MCP servers ---------------------------------------------------------------------------------------------------

mcp_app = typer.Typer(help="MCP servers: list the configured ones, test one, or serve cli-agent's file tools.")
app.add_typer(mcp_app, name="mcp")


@mcp_app.command("list")
def mcp_list(ctx: typer.Context, as_json: AsJson = False, workspace: Workspace = None,
             config: ConfigFile = None) -> int:
    """Start the configured MCP servers and show each one's state and tools."""
    from cli_agent.ui.repl.commands.mcp_commands import list_servers

    return list_servers(_load(ctx, workspace=workspace, config=config), as_json=as_json)


@mcp_app.command("test")
def mcp_test(ctx: typer.Context, name: Annotated[str, typer.Argument(help="A server of [mcp_servers].")],
             workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Start one MCP server (even a disabled one) and list its tools; exit 1 with the reason if it does not start."""
    from cli_agent.ui.repl.commands.mcp_commands import test_server

    return test_server(_load(ctx, workspace=workspace, config=config), name)


@mcp_app.command("serve")
def mcp_serve(ctx: typer.Context, workspace: Workspace = None, yes: Yes = None,
              approval: Annotated[str | None, typer.Option("--approval", help="ask | edits | all: which changes "
                                                                              "run without approval.")] = None,
              config: ConfigFile = None) -> int:
    """Offer the sandboxed file tools over stdio to another MCP client; a change that needs approval is refused
    unless started with --yes or --approval edits|all."""
    from cli_agent.serve.mcp import serve_stdio

    return serve_stdio(_load(ctx, workspace=workspace, yes=yes, approval=approval, config=config).settings)


# -- editors ---------------------------------------------------------------------------------------------------------

@app.command("acp")
def acp_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """Serve the Agent Client Protocol over stdio, for editors (Zed, JetBrains, Toad): each session works in the
    folder the editor gives, with the same config, trust, sandbox and approvals as the CLI. -C DIR: the folder
    whose settings are checked at start (a broken config exits 2 before serving)."""
    from cli_agent.serve.acp.server import serve

    state = ctx.find_root().obj
    _load(ctx, workspace=workspace, config=config)  # a broken config exits 2 here, before any client speaks
    if config is not None:
        state.flags = {**(state.flags or {}), "config": config}
    return serve(state)

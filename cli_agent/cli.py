"""The command line: a thin composition root.

Commands parse their flags, load the settings, open what they need and hand over to the modules that do the
work. Errors become exit codes here and nowhere else (`run`); the provider factory is injectable (`run(argv,
provider_factory=...)`), so tests drive the real CLI with the scripted provider without patching. Nothing heavy is
imported at module level: `--version` must stay instant.
"""

from __future__ import annotations

import signal
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from cli_agent import __version__, errors

__all__ = ["app", "main", "run"]

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False, rich_markup_mode=None,
                  context_settings={"help_option_names": ["-h", "--help"]},
                  help="cli-agent: a terminal coding agent. Run it with no arguments for the REPL, or -p TEXT for "
                       "one task.")
tools_app = typer.Typer(help="List the tools, or run one through the dispatcher.", invoke_without_command=True)
config_app = typer.Typer(help="Show the effective configuration or the files it is read from.")
app.add_typer(tools_app, name="tools")
app.add_typer(config_app, name="config")


@dataclass
class AppState:
    """What the composition root injects into every command."""

    provider_factory: Any = None  # Callable[[Settings], Provider]; None: the default factory
    flags: dict[str, Any] | None = None  # the root's flags, which subcommand flags override


# -- the flags (DESIGN.md's contract); each is also a config key and a CLI_AGENT_<NAME> variable ------------------

Model = Annotated[str | None, typer.Option("--model", "-m", help="A LiteLLM model string (e.g. openai/gpt-4o-mini), "
                                                                "or scripted:FILE.json for the scripted provider.")]
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


def _flags(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def _load(ctx: typer.Context, **sub_flags: Any) -> Any:
    """The settings, from the root's flags overridden by the subcommand's."""
    from cli_agent.config import load_settings

    state: AppState = ctx.find_root().obj
    flags = dict(state.flags or {}) | _flags(**sub_flags)
    config_file = flags.pop("config", None)
    return load_settings(flags, config_file=config_file)


def _factory(ctx: typer.Context) -> Any:
    from cli_agent.session import default_provider_factory

    return ctx.find_root().obj.provider_factory or default_provider_factory


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
         version: Annotated[bool, typer.Option("--version", is_eager=True, callback=_version,
                                               help="Print the version.")] = False) -> int:
    state: AppState = ctx.obj
    state.flags = _flags(model=model, api_base=api_base, api_key=api_key, workspace=workspace, yes=yes,
                         protocol=protocol, max_steps=max_steps, timeout=timeout, output=output, trace=trace,
                         no_tools=no_tools, config=config)
    if ctx.invoked_subcommand is not None:
        return 0
    loaded = _load(ctx)
    if prompt is not None:
        from cli_agent.ui.oneshot import run_one_shot

        return run_one_shot(loaded.settings, prompt, provider_factory=_factory(ctx))
    from cli_agent.ui.repl import run_repl

    return run_repl(loaded, provider_factory=_factory(ctx))


@tools_app.callback()
def tools_list(ctx: typer.Context, as_json: Annotated[bool, typer.Option("--json", help="As JSON.")] = False) -> int:
    """List the tools the model can use, by category."""
    if ctx.invoked_subcommand is not None:
        return 0
    from cli_agent.ui.listing import print_tools

    print_tools(as_json=as_json)
    return 0


@tools_app.command("run")
def tools_run(ctx: typer.Context, name: str, json_args: Annotated[str, typer.Argument(help="The arguments, a JSON "
                                                                                         "object.")] = "{}",
              workspace: Workspace = None, yes: Yes = None, config: ConfigFile = None) -> int:
    """Run one tool call through the dispatcher and the approval policy; print its envelope as JSON."""
    from cli_agent.ui.oneshot import run_tool

    loaded = _load(ctx, workspace=workspace, yes=yes, config=config)
    return run_tool(loaded.settings, name, json_args)


@app.command("prompt")
def prompt_cmd(ctx: typer.Context,
               as_json: Annotated[bool, typer.Option("--json", help="Add the schemas, options, fingerprint.")] = False,
               protocol: Protocol = None, task: Annotated[str, typer.Option("--task", help="The task text that "
                                                                            "selects optional tools.")] = "",
               workspace: Workspace = None, model: Model = None, config: ConfigFile = None) -> int:
    """Print the enhanced system prompt built from the tool specs."""
    from cli_agent.ui.listing import print_prompt

    loaded = _load(ctx, protocol=protocol, workspace=workspace, model=model, config=config)
    print_prompt(loaded.settings, task=task, as_json=as_json)
    return 0


@config_app.command("show")
def config_show(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The effective configuration, each value with where it came from."""
    from cli_agent.config import render_show

    typer.echo(render_show(_load(ctx, workspace=workspace, config=config)))
    return 0


@config_app.command("path")
def config_path(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """The config files read, in the order they are layered."""
    from cli_agent.config import render_paths

    typer.echo(render_paths(_load(ctx, workspace=workspace, config=config)))
    return 0


# -- workflows (issue 6) ------------------------------------------------------------------------------------------


# -- facts and locks (issue 7) ------------------------------------------------------------------------------------


# -- replay, eval and sessions (issue 7) --------------------------------------------------------------------------


# -- undo (issue 9) -----------------------------------------------------------------------------------------------


# -- the local model (issue 8) ------------------------------------------------------------------------------------


# -- errors to exit codes, in one place ---------------------------------------------------------------------------

def _on_sigterm(signum: int, frame: Any) -> None:
    raise errors.TerminateSignal()


def _fail(message: str, code: int) -> int:
    from cli_agent.ui.headless import escape_for_terminal

    sys.stdout.flush()
    sys.stderr.write(f"cli-agent: {escape_for_terminal(message)}\n")
    sys.stderr.flush()
    return code


def run(argv: list[str] | None = None, *, provider_factory: Any = None) -> int:
    """Run the CLI and return its exit code (DESIGN.md's table). The last stderr line says why it failed."""
    previous = signal.signal(signal.SIGTERM, _on_sigterm)
    try:
        result = app(args=argv, obj=AppState(provider_factory=provider_factory), standalone_mode=False,
                     prog_name="cli-agent")
        return result if isinstance(result, int) else 0
    except errors.CliAgentError as exc:
        return _fail(str(exc), exc.exit_code)
    except typer.Exit as exc:
        return int(exc.exit_code or 0)
    except typer.Abort:
        return _fail("interrupted", 130)
    except typer.TyperException as exc:  # a bad flag or argument, as click reports it
        message = exc.format_message() if hasattr(exc, "format_message") else str(exc)
        return _fail(f"usage error: {message} (see cli-agent --help)", 2)
    except KeyboardInterrupt:
        return _fail("interrupted (Ctrl-C)", 130)
    except errors.TerminateSignal:
        return _fail("terminated (SIGTERM)", 143)
    except BrokenPipeError:
        return 1
    except Exception as exc:  # never a traceback to the user
        return _fail(f"internal error: {type(exc).__name__}: {exc}", 1)
    finally:
        signal.signal(signal.SIGTERM, previous)


def main() -> None:
    sys.exit(run())

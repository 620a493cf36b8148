"""`cli-agent sandbox`, `local status`, `replay` and `eval`: what can run here (the command sandbox, the bundled
model), and checks of the agent itself (a recorded session again, the scenario and real-task suites).

No `from __future__ import annotations` (see `cli.flags`): Typer reads the annotations at each start.
"""

import shutil
import sys
from pathlib import Path
from typing import Annotated

import typer

from cli_agent.cli.flags import ApiBase, Attempts, ConfigFile, Workspace, load, root_flag
from cli_agent.cli.replay import run_replay
from cli_agent.contracts import errors, escape_for_terminal
from cli_agent.providers import model_status, resolve_model, stop_kept
from cli_agent.ui.headless import sandbox_report
from cli_agent.ui.view import fit_lines

local_app = typer.Typer(help="The bundled offline model (--model local).")


def sandbox_cmd(ctx: typer.Context, workspace: Workspace = None, config: ConfigFile = None) -> int:
    """What the command sandbox (run_command, !COMMAND) can do here, or why there is none and what would enable
    it. Exit 1 when commands can't run."""
    text, code = sandbox_report(load(ctx, workspace=workspace, config=config).settings)
    text = escape_for_terminal(text)  # a pipe gets whole lines; a terminal, lines wrapped to its width
    typer.echo(fit_lines(text, shutil.get_terminal_size().columns) if sys.stdout.isatty() else text)
    return code


def replay_cmd(ctx: typer.Context,
               trace_file: Annotated[Path, typer.Argument(metavar="TRACE", help="A trace (JSONL) to replay.")],
               output: Annotated[str | None, typer.Option("--output", "-o", help="text | json")] = None,
               run_commands: Annotated[bool, typer.Option(
                   "--run-commands", help="Run the trace's commands in the command sandbox (on the copy) instead "
                                          "of playing their recorded results back.")] = False) -> int:
    """Re-run a recorded session in a copy of its workspace; exit 1 at the first divergence. The trace's commands
    are played back, not run, unless --run-commands."""
    load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    return run_replay(trace_file, output or root_flag(ctx, "output") or "text", run_commands=run_commands)


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
                                                                      "switch off), +NAME (one choice on: "
                                                                      "+rewrite_first), comma-separated.")] = "all",
             keep: Annotated[Path | None, typer.Option("--keep", help="Real suite: keep each run's trace in this "
                                                                      "folder (TASK.PROTOCOL.VARIANT.trace.jsonl).")]
             = None, attempts: Attempts = None,
             workers: Annotated[int, typer.Option("--workers", help="Real suite: run this many tasks side by "
                                                                    "side.")] = 1,
             shard: Annotated[str | None, typer.Option("--shard", help="Real suite: run only shard I of N (I/N), "
                                                                        "e.g. one per CI machine.")] = None,
             merge: Annotated[list[Path] | None, typer.Option("--merge", help="Real suite: merge these shards' "
                                                                              "reports into one (repeat it).")]
             = None,
             tasks: Annotated[Path | None, typer.Option("--tasks", help="Real suite: a suite file of your own "
                                                                        "(the format of eval/real.toml).")]
             = None) -> int:
    """Offline: the scripted scenario suite (exit 1 if any fails). Live (--models): real tasks per model.
    --suite real: real tasks on released projects, each graded by the project's own tests."""
    # deferred: the eval suites, only for `cli-agent eval`
    from cli_agent.eval import merge_command, run_eval_command, run_real_command

    load(ctx, announce=False)  # a broken config exits 2 here as everywhere
    flags = ctx.find_root().obj.flags or {}
    if suite == "real" and merge:
        return merge_command(list(merge), report)
    if suite == "real":
        return run_real_command(model=model or flags.get("model") or "local", protocols=protocols,
                                variants=variants, only=only, report=report,
                                api_base=api_base or flags.get("api_base"), keep=keep,
                                attempts=attempts or flags.get("attempts") or 1, workers=workers, shard=shard,
                                suite=tasks)
    if suite != "offline":
        raise errors.UsageError(f"--suite is offline or real, not {suite!r}")
    return run_eval_command(report=report, models=models, api_base=api_base or flags.get("api_base"),
                            markdown=markdown, only=only)


@local_app.command("status")
def local_status(ctx: typer.Context,
                 rehash: Annotated[bool, typer.Option("--verify", help="Hash the model file again.")] = False,
                 local_model: Annotated[str | None, typer.Option("--local-model", help="qwen2.5-coder-1.5b | "
                                                                 "smollm2-135m | PATH.gguf")] = None,
                 config: ConfigFile = None) -> int:
    """The local model: its file, size, sha256 check, and whether the runtime is installed."""
    loaded = load(ctx, local_model=local_model, config=config)
    status = model_status(resolve_model(loaded.settings.local.model), rehash=rehash)
    typer.echo(escape_for_terminal("\n".join(status.lines())))
    if not status.ok:
        raise errors.UsageError(status.check)
    return 0


@local_app.command("stop")
def local_stop() -> int:
    """End the local model server kept loaded for the next cli-agent ([local] keep_warm_s)."""
    pid = stop_kept()
    typer.echo("no local model server is kept" if pid is None else f"stopped the kept local model server (pid {pid})")
    return 0

"""`cli-agent eval`: the offline scenario suite (scripted provider, the default) and live model comparisons.

    run_offline(only=None) -> [ScenarioResult]          # cli_agent.eval.runner, scenarios in offline.toml
    run_live(models, api_base=None) -> [ModelResult]     # cli_agent.eval.live, tasks in live.toml

Nothing is imported until a function runs.

A front end, beside ui/ and serve/: may import workflows, session and everything below them.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors

if TYPE_CHECKING:
    from cli_agent.eval.real_report import merge_command, run_real_command

if TYPE_CHECKING:
    from cli_agent.eval.live import ModelResult
    from cli_agent.eval.runner import ScenarioResult



def run_offline(only: str | None = None) -> list[ScenarioResult]:
    from cli_agent.eval.runner import run_scenario
    from cli_agent.eval.scenarios import load_scenarios

    scenarios = load_scenarios(only)
    if not scenarios:
        raise errors.UsageError(f"no offline scenario matches {only!r}")
    return [run_scenario(s) for s in scenarios]


def run_live(models: list[str], api_base: str | None = None, only: str | None = None,
             **limits: Any) -> list[ModelResult]:
    from cli_agent.eval.live import run_model
    from cli_agent.eval.scenarios import load_live_tasks

    tasks = load_live_tasks(only)
    if not tasks:
        raise errors.UsageError(f"no live task matches {only!r}")
    return [run_model(model, tasks, api_base=api_base, **limits) for model in models]


def run_eval_command(*, report: Path | None = None, models: str | None = None, api_base: str | None = None,
                     markdown: Path | None = None, only: str | None = None) -> int:
    """Offline by default (exit 1 if any scenario fails); with `models`, the live comparison (exit 2 if no
    model had credentials, 1 if any task failed)."""
    import sys

    from cli_agent.eval import report as out

    if models is None:
        if markdown is not None:
            raise errors.UsageError("--markdown is for the live comparison: add --models A,B")
        results = run_offline(only)
        out.print_offline(results)
        failed = [r for r in results if not r.passed]
        written = out.write_json(report, {"kind": "offline", "passed": len(results) - len(failed),
                                          "failed": len(failed), "scenarios": [r.to_dict() for r in results]})
        sys.stdout.write(f"report: {written}\n")
        if failed:
            raise errors.CliAgentError(f"{len(failed)} of {len(results)} offline scenarios failed: "
                                       f"{', '.join(r.name for r in failed)}")
        return 0
    names = [m.strip() for m in models.split(",") if m.strip()]
    if not names:
        raise errors.UsageError("--models needs at least one model, e.g. --models openai/gpt-4o-mini,openai/gpt-4.1")
    live = run_live(names, api_base=api_base, only=only)
    out.print_live(live)
    written = out.write_json(report, {"kind": "live", "api_base": api_base, "models": [m.to_dict() for m in live]})
    sys.stdout.write(f"report: {written}\n")
    if markdown is not None:
        try:
            markdown.write_text(out.live_markdown(live), encoding="utf-8")
        except OSError as exc:
            raise errors.UsageError(f"cannot write {markdown}: {exc.strerror or exc}") from exc
        sys.stdout.write(f"markdown: {markdown}\n")
    if all(m.missing_credentials for m in live):
        raise errors.MissingCredentialsError("no model could run: " + "; ".join(m.note for m in live))
    failed = sum(len(m.tasks) - m.passed for m in live if not m.missing_credentials)
    if failed or any(m.missing_credentials for m in live):
        raise errors.CliAgentError(f"{failed} live task(s) failed" + "".join(
            f"; {m.model}: {m.note}" for m in live if m.missing_credentials))
    return 0

__all__ = [
    "merge_command",
    "run_eval_command",
    "run_live",
    "run_offline",
    "run_real_command",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("merge_command", "run_real_command"):
        from cli_agent.eval import real_report

        return getattr(real_report, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

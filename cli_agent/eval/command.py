"""The `cli-agent eval` command: the offline scenario suite (scripted provider, the default) and the live comparison
of models, run and reported."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from cli_agent.contracts import errors
from cli_agent.eval import report as out
from cli_agent.eval.live import ModelResult, run_model
from cli_agent.eval.runner import ScenarioResult, run_scenario
from cli_agent.eval.scenarios import load_live_tasks, load_scenarios

__all__ = ["run_eval_command", "run_live", "run_offline"]


def run_offline(only: str | None = None) -> list[ScenarioResult]:
    scenarios = load_scenarios(only)
    if not scenarios:
        raise errors.UsageError(f"no offline scenario matches {only!r}")
    return [run_scenario(s) for s in scenarios]


def run_live(models: list[str], api_base: str | None = None, only: str | None = None,
             **limits: Any) -> list[ModelResult]:
    tasks = load_live_tasks(only)
    if not tasks:
        raise errors.UsageError(f"no live task matches {only!r}")
    return [run_model(model, tasks, api_base=api_base, **limits) for model in models]


def run_eval_command(*, report: Path | None = None, models: str | None = None, api_base: str | None = None,
                     markdown: Path | None = None, only: str | None = None) -> int:
    """Offline by default (exit 1 if any scenario fails); with `models`, the live comparison (exit 2 if no
    model had credentials, 1 if any task failed)."""
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

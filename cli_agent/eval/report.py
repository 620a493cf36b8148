"""What `cli-agent eval` prints and writes: a Rich table on stdout, a JSON report, and (live) a Markdown table."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from cli_agent import __version__
from cli_agent.contracts import UsageError
from cli_agent.fs import paths

if TYPE_CHECKING:
    from cli_agent.eval.live import ModelResult
    from cli_agent.eval.runner import ScenarioResult


def default_report_path() -> Path:
    return paths.user_state_dir() / "eval" / f"report-{time.strftime('%Y%m%d-%H%M%S')}.json"


def write_json(path: Path | None, report: dict[str, Any]) -> Path:
    path = path or default_report_path()
    report = {"cli_agent": __version__, "time": time.strftime("%Y-%m-%dT%H:%M:%S%z")} | report
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(report, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"cannot write the report {path}: {exc.strerror or exc}") from exc
    return path


def _console() -> Any:
    """A Rich console; one that is not a terminal gets 120 columns (Rich's 80 squeezes the table)."""
    console = Console(highlight=False)
    if not console.is_terminal and console.width < 120:
        console = Console(highlight=False, width=120)
    return console


def print_offline(results: list[ScenarioResult]) -> None:
    table = Table(title="cli-agent eval (offline)", title_justify="left")
    table.add_column("scenario", no_wrap=True)
    table.add_column("result", no_wrap=True, min_width=6)
    table.add_column("exit", justify="right", no_wrap=True, min_width=4)
    table.add_column("req", justify="right", no_wrap=True, min_width=3)
    table.add_column("s", justify="right", no_wrap=True, min_width=4)
    table.add_column("covers / why it failed", overflow="fold")
    for r in results:
        table.add_row(r.name, "[green]pass[/]" if r.passed else "[red]FAIL[/]", str(r.exit_code), str(r.requests),
                      f"{r.seconds:.2f}", r.covers if r.passed else "[red]" + escape("; ".join(r.failures)) + "[/]")
    console = _console()
    console.print(table)
    failed = [r.name for r in results if not r.passed]
    console.print(f"{len(results) - len(failed)} of {len(results)} scenarios passed"
                  + (f"; failed: {', '.join(failed)}" if failed else ""))


_LIVE_COLUMNS = ("model", "tasks", "valid calls", "malformed", "steps", "tokens", "cost $", "time s", "note")


def _live_rows(results: list[ModelResult]) -> list[tuple[str, ...]]:
    rows: list[tuple[str, ...]] = []
    for m in results:
        rate = f"{m.valid_calls}/{m.tool_calls}" + (f" ({m.valid_calls / m.tool_calls:.0%})" if m.tool_calls else "")
        rows.append((m.model, f"{m.passed}/{len(m.tasks)}", rate, str(m.malformed), str(m.steps), str(m.tokens),
                     f"{m.cost_usd:.4f}", f"{m.seconds:.1f}", m.note))
    return rows


def print_live(results: list[ModelResult]) -> None:
    table = Table(title="cli-agent eval (live)", title_justify="left")
    for column in _LIVE_COLUMNS:
        table.add_column(column, overflow="fold")
    for row in _live_rows(results):
        table.add_row(*row)
    console = _console()
    console.print(table)
    for m in results:
        for task in m.tasks:
            if not task.passed:
                console.print(f"  {m.model} · {task.name}: {task.why}", markup=False)


def live_markdown(results: list[ModelResult]) -> str:
    def cell(text: str) -> str:
        return text.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(_LIVE_COLUMNS) + " |", "|" + "---|" * len(_LIVE_COLUMNS)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in _live_rows(results)]
    return "\n".join(lines) + "\n"

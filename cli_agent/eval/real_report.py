"""What `cli-agent eval --suite real` prints: one line per task as it finishes, then pass rates per protocol and
variant, and the JSON report."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import errors

if TYPE_CHECKING:
    from cli_agent.eval.real import RealResult

__all__ = ["run_real_command"]

HEADER = f"{'task':<20} {'protocol':<8} {'variant':<18} {'result':<6} {'exit':>4} {'steps':>5} {'tokens':>7} " \
         f"{'s':>7}  why"


def line(r: RealResult) -> str:
    return (f"{r.task:<20} {r.protocol:<8} {r.variant:<18} {'pass' if r.passed else 'FAIL':<6} "
            f"{r.exit_code if r.exit_code is not None else '-':>4} {r.steps:>5} {r.tokens:>7} {r.seconds:>7.1f}  "
            f"{r.why[:90]}")


def summary(results: list[RealResult]) -> list[str]:
    groups: dict[tuple[str, str], list[RealResult]] = {}
    for r in results:
        groups.setdefault((r.protocol, r.variant), []).append(r)
    return [f"{protocol:<8} {variant:<18} {sum(r.passed for r in rs)}/{len(rs)} passed{_pass_at(rs)}, "
            f"{sum(r.steps for r in rs)} steps, {sum(r.tokens for r in rs)} tokens, "
            f"{sum(r.seconds for r in rs):.0f} s" for (protocol, variant), rs in groups.items()]


def _pass_at(results: list[RealResult]) -> str:
    """` (pass@1 3/8, pass@N 5/8)` when some run kept a later candidate (`--attempts`), else ""."""
    if not any(r.attempt > 1 for r in results):
        return ""
    first = sum(r.passed and r.attempt <= 1 for r in results)
    return f" (pass@1 {first}/{len(results)}, pass@N {sum(r.passed for r in results)}/{len(results)})"


def run_real_command(*, model: str, protocols: str, variants: str, only: str | None, report: Path | None,
                     api_base: str | None, keep: Path | None = None, attempts: int = 1) -> int:
    from cli_agent.eval import report as out
    from cli_agent.eval.real import load_real_tasks, run_real

    tasks = load_real_tasks(only)
    if not tasks:
        raise errors.UsageError(f"no real task matches {only!r}")
    chosen = tuple(p.strip() for p in protocols.split(",") if p.strip())
    if not chosen or any(p not in ("json", "native") for p in chosen):
        raise errors.UsageError(f"--protocols takes json and/or native, not {protocols!r}")
    kinds = tuple(v.strip() for v in variants.split(",") if v.strip()) or ("all",)
    sys.stdout.write(HEADER + "\n")

    def show(result: RealResult) -> None:
        sys.stdout.write(line(result) + "\n")
        sys.stdout.flush()

    if not 1 <= attempts <= 10:
        raise errors.UsageError(f"--attempts takes 1 to 10, not {attempts}")
    results = run_real(tasks, model=model, protocols=chosen, variants=kinds, api_base=api_base, on_result=show,
                       keep=keep, attempts=attempts)
    sys.stdout.write("\n" + "\n".join(summary(results)) + "\n")
    written = out.write_json(report, {"kind": "real", "model": model, "attempts": attempts,
                                      "results": [r.to_dict() for r in results]})
    sys.stdout.write(f"report: {written}\n")
    failed = [r for r in results if not r.passed]
    if failed:
        raise errors.CliAgentError(f"{len(failed)} of {len(results)} real task runs failed")
    return 0

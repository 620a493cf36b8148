"""What `cli-agent eval --suite real` prints: one line per task as it finishes, then pass rates per protocol and
variant (pass@1, pass@N, and the runs that ended "done" with the tests failing), and the JSON report. `--merge`
reads the reports of a run's shards and prints and writes the same report for the whole run."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors
from cli_agent.eval import report as out
from cli_agent.eval.real import RealResult, load_real_tasks
from cli_agent.eval.real_run import RunOptions, planned, ready, run_all, shard_of

if TYPE_CHECKING:
    from cli_agent.eval.real import RealResult

__all__ = ["merge_command", "run_real_command"]

HEADER = f"{'task':<24} {'protocol':<8} {'variant':<18} {'result':<6} {'exit':>4} {'steps':>5} {'tokens':>7} " \
         f"{'s':>7}  why"


def line(r: RealResult) -> str:
    return (f"{r.task:<24} {r.protocol:<8} {r.variant:<18} {'pass' if r.passed else 'FAIL':<6} "
            f"{r.exit_code if r.exit_code is not None else '-':>4} {r.steps:>5} {r.tokens:>7} {r.seconds:>7.1f}  "
            f"{r.why[:90]}")


def summary(results: list[RealResult], attempts: int = 1) -> list[str]:
    groups: dict[tuple[str, str], list[RealResult]] = {}
    for r in results:
        groups.setdefault((r.protocol, r.variant), []).append(r)
    return [f"{protocol:<8} {variant:<18} {sum(r.passed for r in rs)}/{len(rs)} passed ({_pass_at(rs, attempts)}; "
            f"done with the tests failing: {sum(r.done_failing for r in rs)}), {sum(r.steps for r in rs)} steps, "
            f"{sum(r.tokens for r in rs)} tokens, {sum(r.seconds for r in rs):.0f} s"
            for (protocol, variant), rs in groups.items()]


def _pass_at(results: list[RealResult], attempts: int) -> str:
    """`pass@1 3/8, pass@3 5/8`: passed by the run's own change (candidate 1), and by any of the N candidates."""
    first = sum(r.passed and r.attempt <= 1 for r in results)
    text = f"pass@1 {first}/{len(results)}"
    return text + (f", pass@{attempts} {sum(r.passed for r in results)}/{len(results)}" if attempts > 1 else "")


def run_real_command(*, model: str, protocols: str, variants: str, only: str | None, report: Path | None,
                     api_base: str | None, keep: Path | None = None, attempts: int = 1, workers: int = 1,
                     shard: str | None = None, suite: Path | None = None) -> int:
    tasks = load_real_tasks(only, suite)
    if not tasks:
        raise errors.UsageError(f"no real task matches {only!r}")
    chosen = tuple(p.strip() for p in protocols.split(",") if p.strip())
    if not chosen or any(p not in ("json", "native") for p in chosen):
        raise errors.UsageError(f"--protocols takes json and/or native, not {protocols!r}")
    kinds = tuple(v.strip() for v in variants.split(",") if v.strip()) or ("all",)
    if not 1 <= attempts <= 10:
        raise errors.UsageError(f"--attempts takes 1 to 10, not {attempts}")
    if not 1 <= workers <= 64:
        raise errors.UsageError(f"--workers takes 1 to 64, not {workers}")
    part = shard_of(shard or "1/1")
    runs = planned(tasks, chosen, kinds, part)
    total = len(planned(tasks, chosen, kinds))

    def prepared(pin: str) -> None:
        sys.stdout.write(f"project {pin}: sdist and test venv ready\n")

    ready(runs, on_project=prepared)
    sys.stdout.write(HEADER + "\n")

    def show(result: RealResult) -> None:
        sys.stdout.write(line(result) + "\n")
        sys.stdout.flush()

    results = run_all(runs, RunOptions(model=model, api_base=api_base, attempts=attempts, keep=keep),
                      workers=workers, on_result=show)
    meta = {"kind": "real", "model": model, "attempts": attempts, "shard": f"{part[0]}/{part[1]}", "planned": total}
    return _finish(results, meta, report)


def _finish(results: list[RealResult], meta: dict[str, Any], report: Path | None) -> int:
    sys.stdout.write("\n" + "\n".join(summary(results, int(meta["attempts"]))) + "\n")
    written = out.write_json(report, meta | {"results": [r.to_dict() for r in results]})
    sys.stdout.write(f"report: {written}\n")
    failed = [r for r in results if not r.passed]
    if failed:
        raise errors.CliAgentError(f"{len(failed)} of {len(results)} real task runs failed")
    return 0


def merge_command(paths: list[Path], report: Path | None) -> int:
    """The shards' reports as one: every shard of one plan once, the same model and attempts; exit 1 if a run
    failed, as the whole run would."""
    if not paths:
        raise errors.UsageError("--merge needs the shards' reports (REPORT.json ...)")
    metas, results = [], []
    for path in paths:
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            rows = [RealResult(**{k: v for k, v in row.items() if k != "done_failing"}) for row in data["results"]]
            meta = {k: data[k] for k in ("kind", "model", "attempts", "shard", "planned")}
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise errors.UsageError(f"{path} is no report of `eval --suite real`: {exc}") from exc
        if meta["kind"] != "real":
            raise errors.UsageError(f"{path} is a {meta['kind']!r} report, not one of --suite real")
        metas.append(meta)
        results += rows
    _check_shards(paths, metas)
    sys.stdout.write(HEADER + "\n" + "".join(line(r) + "\n" for r in results))
    merged = {"kind": "real", "model": metas[0]["model"], "attempts": metas[0]["attempts"], "shard": "1/1",
              "planned": metas[0]["planned"], "merged": [str(p) for p in paths]}
    return _finish(results, merged, report)


def _check_shards(paths: list[Path], metas: list[dict[str, Any]]) -> None:
    for key in ("model", "attempts", "planned"):
        values = {str(m[key]) for m in metas}
        if len(values) > 1:
            raise errors.UsageError(f"the reports differ in {key} ({', '.join(sorted(values))}): not one run's shards")
    shards = [str(m["shard"]) for m in metas]
    count = int(shards[0].partition("/")[2] or 0)
    seen = set()
    for path, shard in zip(paths, shards, strict=True):
        if shard in seen or not shard.endswith(f"/{count}"):
            raise errors.UsageError(f"{path}: shard {shard} twice, or of another split than /{count}")
        seen.add(shard)
    missing = [f"{i}/{count}" for i in range(1, count + 1) if f"{i}/{count}" not in seen]
    if missing:
        raise errors.UsageError(f"shard(s) {', '.join(missing)} missing: merge every shard of the run")

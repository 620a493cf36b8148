"""The real suite, task by task, with two cli-agent installs alternated: this checkout (llama.cpp's own server
from the xllamacpp wheel) against another install, such as the last release on llama-cpp-python.

    .venv/bin/python benchmarks/eval_engines.py --other /path/to/old-venv/bin/cli-agent
    .venv/bin/python benchmarks/eval_engines.py --other OLD --tasks escape-amp,escape-all --json

For each task, both sides run `cli-agent eval --suite real --model local --only TASK` as whole processes, each
with its own fresh `CLI_AGENT_HOME` kept across its tasks (so each side assembles its weights once, before the
first timed task, and keeps whatever warm cache it builds). The side that goes first alternates from task to
task. A task counts as passed when the report says so; the time is the whole process, server start included.
Printed: each task's pass and seconds on both sides, then the totals, the pass counts and the ratio of the
totals. The default tasks are the suite as it was when the local model ran on llama-cpp-python (its eight
markupsafe tasks), which both sides have.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The tasks of the suite as it was when the local model ran on llama-cpp-python (the markupsafe tasks).
DEFAULT_TASKS = ("escape-amp", "escape-silent-none", "soft-str-inverted", "striptags-spaces", "escape-all",
                 "is-empty", "rename-soft-str", "escape-backtick")


def run_task(command: list[str], task: str, home: Path) -> tuple[bool | None, float]:
    """One side on one task: (passed, or None when no report said; wall seconds)."""
    report = home / f"report-{task}.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    started = time.perf_counter()
    subprocess.run([*command, "eval", "--suite", "real", "--model", "local", "--only", task, "--report", str(report)],
                   env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=False)
    wall = time.perf_counter() - started
    try:
        data = json.loads(report.read_text())
    except (OSError, ValueError):
        return None, wall
    results = [r for r in _rows(data) if r.get("task", r.get("name")) == task]
    return (bool(results) and all(r.get("passed") for r in results)), wall


def _rows(data: object) -> list[dict]:
    if isinstance(data, dict):
        for key in ("results", "runs", "tasks"):
            if isinstance(data.get(key), list):
                return [r for r in data[key] if isinstance(r, dict)]
    return []


def warm_up(command: list[str], home: Path) -> None:
    """Before the first timed task, one untimed one-step run in an empty folder: the side assembles its weights
    and builds whatever warm cache it keeps, as a user's first run would have."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"CLI_AGENT_HOME": str(home)}
    with tempfile.TemporaryDirectory(prefix="cli-agent-warm-") as folder:
        subprocess.run([*command, "-C", folder, "--model", "local", "-p", "Say hi.", "--max-steps", "1", "--yes"],
                       env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=False)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--other", required=True, help="the other install's cli-agent command")
    parser.add_argument("--this", default=f"{shlex.quote(sys.executable)} -m cli_agent",
                        help="this side's command (default: this Python's cli_agent)")
    parser.add_argument("--tasks", default=",".join(DEFAULT_TASKS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sides = {"this": shlex.split(args.this), "other": shlex.split(args.other)}
    tasks = [t for t in args.tasks.split(",") if t]
    rows = []
    with tempfile.TemporaryDirectory(prefix="cli-agent-engines-") as tmp:
        homes = {name: Path(tmp) / name for name in sides}
        for name, command in sides.items():
            homes[name].mkdir()
            warm_up(command, homes[name])
        for i, task in enumerate(tasks):
            order = ["this", "other"] if i % 2 == 0 else ["other", "this"]
            row: dict[str, object] = {"task": task, "first": order[0]}
            for name in order:
                passed, wall = run_task(sides[name], task, homes[name])
                row[name] = {"passed": passed, "s": round(wall, 1), "load": round(os.getloadavg()[0], 2)}
            rows.append(row)
            if not args.json:
                print(f"{task:<22} this {_cell(row['this'])}   other {_cell(row['other'])}", flush=True)
    totals = {name: round(sum(r[name]["s"] for r in rows), 1) for name in sides}  # type: ignore[index]
    passes = {name: sum(1 for r in rows if r[name]["passed"]) for name in sides}  # type: ignore[index]
    summary = {"tasks": len(rows), "total_s": totals, "passed": passes,
               "ratio_this_to_other": round(totals["this"] / totals["other"], 3) if totals["other"] else None}
    if args.json:
        print(json.dumps({"rows": rows, "summary": summary}, indent=2))
    else:
        print(f"total: this {totals['this']:.0f} s ({passes['this']}/{len(rows)} passed), other "
              f"{totals['other']:.0f} s ({passes['other']}/{len(rows)} passed); this/other = "
              f"{summary['ratio_this_to_other']}")
    return 0


def _cell(side: object) -> str:
    assert isinstance(side, dict)
    mark = {True: "pass", False: "FAIL", None: "none"}[side["passed"]]
    return f"{mark} {side['s']:>6.1f} s (load {side['load']})"


if __name__ == "__main__":
    sys.exit(main())

"""The command sandbox's cost: per command against a plain `subprocess.run(["true"])`, and the project's own
pytest (a short slice of it) inside the sandbox against outside it.

Both are paired and alternated (outside, inside, outside, ...) so load drifts hit both alike; figures are medians.
"Inside" is the whole of `run_in_sandbox`: the staging folder, bwrap with its namespaces and overlay, the command,
reading back the change set (empty here: pytest runs with -p no:cacheprovider and bytecode goes to a cache
outside), and removing the staging folder. The probe is done once, before timing.

    python benchmarks/command_sandbox.py [--runs N] [--pytest-runs M]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import REPO, Row, emit, load_note, median

COST_TARGET_MS = 30.0
RATIO_TARGET = 1.1
PYTEST_SLICE = ("tests/unit/config/test_settings.py", "tests/unit/tools/test_registry.py",
                "tests/unit/prompt/test_builder.py")


def _inside(command: str, workspace: Path) -> float:
    from cli_agent.sandbox import Policy, probe, run_in_sandbox
    from cli_agent.sandbox.process import Limits

    started = time.perf_counter()
    running = run_in_sandbox(command, probe(), Policy(workspace=workspace), Limits(timeout_s=600), lambda _: None)
    while True:
        try:
            next(running)
        except StopIteration as done:
            if done.value.outcome.exit_code != 0:
                raise SystemExit(f"{command!r} failed in the sandbox:\n{done.value.outcome.output[-2000:]}") from None
            return time.perf_counter() - started


def _outside(argv: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    subprocess.run(argv, cwd=cwd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def measure_rows(runs: int, pytest_runs: int) -> list[Row]:
    from cli_agent.sandbox import probe

    capability = probe()
    if not capability.available:
        return [Row("command_sandbox", "command sandbox", "no sandbox here", "-", None, capability.reason)]
    tests = [t for t in PYTEST_SLICE if (REPO / t).exists()]
    os.environ["PYTHONPYCACHEPREFIX"] = os.environ.get("PYTHONPYCACHEPREFIX", "/tmp/cli-agent-bench-pycache")
    plain, boxed = [], []
    for _ in range(runs):
        plain.append(_outside(["true"], REPO))
        boxed.append(_inside("true", REPO))
    extra_ms = (median(boxed) - median(plain)) * 1000
    pytest_argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *tests]
    out_times, in_times = [], []
    for _ in range(pytest_runs):
        out_times.append(_outside(pytest_argv, REPO))
        in_times.append(_inside(" ".join(pytest_argv), REPO))
    ratio = median(in_times) / median(out_times)
    return [
        Row("command_cost", "command sandbox: `true` inside vs subprocess.run([\"true\"])",
            f"+{extra_ms:.1f} ms", f"≤ +{COST_TARGET_MS:.0f} ms", extra_ms / COST_TARGET_MS,
            f"median of {runs} alternated pairs: {median(boxed) * 1000:.1f} ms vs {median(plain) * 1000:.1f} ms; "
            f"{load_note()}"),
        Row("command_pytest", f"command sandbox: pytest ({len(tests)} test files) inside vs outside",
            f"{ratio:.2f}×", f"≤ {RATIO_TARGET}×", ratio / RATIO_TARGET,
            f"median of {pytest_runs} alternated pairs: {median(in_times):.2f} s vs {median(out_times):.2f} s; "
            f"{load_note()}"),
    ]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--pytest-runs", type=int, default=3)
    args = parser.parse_args()
    sys.path.insert(0, str(REPO))
    emit(measure_rows(args.runs, args.pytest_runs))

"""One-shot trivial turn: `cli-agent -p hi --model openai/x --api-base <loopback fake>`, whole process.

Median wall time of N runs (after warm-up runs that fill the bytecode cache), peak RSS of the largest run, and the
median CPU time (what the wall time would be on an idle machine, give or take the kernel's share).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, Sample, cli_command, emit, fake_model_dirs, measure_ok, median

TARGET_WALL = 0.40  # seconds (Codex CLI: 0.41 s)
TARGET_RSS_MIB = 120.0  # MiB (Codex CLI: 148 MiB)
RUNS = 7
WARMUP = 2


def oneshot_argv(url: str) -> list[str]:
    return [*cli_command(), "-p", "hi", "--model", "openai/x", "--api-base", url]


def run_cli(url: str, home: Path, ws: Path) -> Sample:
    return measure_ok(oneshot_argv(url), home, ws, "hi", "cli-agent")


def measure_rows(runs: int = RUNS) -> list[Row]:
    with fake_model_dirs("hi") as (url, home, ws):
        for _ in range(WARMUP):
            run_cli(url, home, ws)
        samples = [run_cli(url, home, ws) for _ in range(runs)]
    wall = median([s.wall for s in samples])
    cpu = median([s.cpu for s in samples])
    rss = max(s.rss_kib for s in samples) / 1024
    return [Row("oneshot", "one-shot trivial turn", f"{wall:.3f} s wall, {rss:.0f} MiB",
                f"≤ {TARGET_WALL:.2f} s, ≤ {TARGET_RSS_MIB:.0f} MiB",
                max(wall / TARGET_WALL, rss / TARGET_RSS_MIB),
                f"median of {runs} runs after {WARMUP} warm-up runs; fastest {min(s.wall for s in samples):.3f} s; "
                f"peak RSS of the largest run", cpu=f"{cpu:.3f} s")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))

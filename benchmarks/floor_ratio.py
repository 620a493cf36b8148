"""Ratio to the floor: the one-shot trivial turn against the same request made by a 5-line httpx script
(floor_httpx.py), alternated in one run so both see the same machine load. Ratio of the median wall times."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, Sample, emit, fake_model_dirs, measure_ok, median, python_command
from oneshot import WARMUP, run_cli

TARGET = 2.5
RUNS = 7
FLOOR = Path(__file__).resolve().parent / "floor_httpx.py"


def run_floor(url: str, home: Path, ws: Path) -> Sample:
    return measure_ok([*python_command(), str(FLOOR), url], home, ws, "hi", "the httpx floor script")


def measure_rows(runs: int = RUNS) -> list[Row]:
    with fake_model_dirs("hi") as (url, home, ws):
        for _ in range(WARMUP):
            run_cli(url, home, ws)
            run_floor(url, home, ws)
        ours: list[Sample] = []
        floor: list[Sample] = []
        for _ in range(runs):
            ours.append(run_cli(url, home, ws))
            floor.append(run_floor(url, home, ws))
    wall_ours, wall_floor = median([s.wall for s in ours]), median([s.wall for s in floor])
    cpu_ours, cpu_floor = median([s.cpu for s in ours]), median([s.cpu for s in floor])
    ratio = wall_ours / wall_floor
    return [Row("floor", "ratio to the floor (httpx script)", f"{ratio:.2f}× ({wall_ours:.3f} s / {wall_floor:.3f} s)",
                f"≤ {TARGET}×", ratio / TARGET,
                f"alternated, median of {runs} each; CPU {cpu_ours:.3f} s / {cpu_floor:.3f} s",
                cpu=f"{cpu_ours / cpu_floor:.2f}×")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))

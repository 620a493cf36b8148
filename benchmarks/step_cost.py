"""Per-step cost over a long session: `cli-agent -p` against the loopback fake OpenAI server, whose model asks for
`read_file` STEPS times, then answers. A step is what happens between two `model_request` events on the
`--output stream-json` stream: the request (the whole history, sent each step), the reply, the tool call, the
events. Its cost is the CPU time the cli-agent process spent in it, read at each event from the scheduler's
nanosecond count of each of its threads (`/proc/PID/task/*/schedstat`; `/proc/PID/stat` counts 10 ms ticks, a
tenth of a 50-step window): ours alone, not the server's, which parses the whole growing body each step in the
benchmark's own process. The tick count of the whole run is printed beside the nanosecond one, so a thread that
ended between two events (its time lost to the per-thread count) would show. Reported: the mean step around step 10
and over the last steps, and their ratio (target ≤ 2); wall times in the detail.

    python benchmarks/step_cost.py [STEPS]
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, bench_env, cli_command, emit, load_note, median

STEPS = 1000
TARGET = 2.0


def cpu_seconds(pid: int) -> float:
    """The process's CPU time in clock ticks (dead threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def cpu_ns_seconds(pid: int) -> float:
    """The CPU time of the process's live threads, to the nanosecond."""
    total = 0
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):  # the thread ended meanwhile
            continue
    return total / 1e9


def step_times(steps: int) -> tuple[list[float], list[float], float]:
    """(CPU seconds, wall seconds) of each step, and the CPU seconds of the whole run in clock ticks."""
    from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer() as server:
        home, ws = Path(tmp, "home"), Path(tmp, "ws")
        ws.mkdir()
        (ws / "notes.txt").write_text("a short file the model reads again and again\n" * 20)
        for n in range(steps):
            server.push({"tool_calls": [{"id": f"c{n}", "name": "read_file", "arguments": {"path": "notes.txt"}}]})
        server.push({"text": "done"})
        argv = [*cli_command(), "-p", "read notes.txt many times", "--model", "openai/fake", "--api-base", server.url,
                "--max-steps", str(steps + 1), "--timeout", "3000", "--output", "stream-json", "--yes"]
        proc = subprocess.Popen(argv, cwd=ws, env=bench_env(home), stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        stamps, cpu, ticks = [], [], []
        for line in proc.stdout:
            if '"model_request"' in line and json.loads(line).get("type") == "model_request":
                stamps.append(time.perf_counter())
                cpu.append(cpu_ns_seconds(proc.pid))
                ticks.append(cpu_seconds(proc.pid))
        if proc.wait() != 0 or len(stamps) != steps + 1:
            raise SystemExit(f"the {steps}-step run failed (exit {proc.returncode}, {len(stamps)} requests)")
    return ([b - a for a, b in itertools.pairwise(cpu)], [b - a for a, b in itertools.pairwise(stamps)],
            ticks[-1] - ticks[0])


def main() -> None:
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else STEPS
    print(load_note())
    cpu, wall, ticked = step_times(steps)
    window = min(50, steps // 4)
    early, late = sum(cpu[5:5 + window]) / window, sum(cpu[-window:]) / window
    ratio = late / max(early, 1e-6)
    print(load_note())
    emit([Row("step_cost", f"per-step cost, {steps}-step session (CPU of cli-agent)",
              f"{early * 1000:.1f} ms at step 10, {late * 1000:.1f} ms at step {steps} ({ratio:.2f}×)",
              f"≤ {TARGET:g}× from step 10 to {steps}", ratio / TARGET,
              f"means of steps 5-{5 + window} and of the last {window}; all steps {sum(cpu):.2f} s of CPU counted "
              f"per thread, {ticked:.2f} s in clock ticks; wall (with the server's time): "
              f"median {median(wall[5:5 + window]) * 1000:.1f} ms at step 10, "
              f"{median(wall[-window:]) * 1000:.1f} ms at the end; min/median/max wall of all steps "
              f"{min(wall) * 1000:.1f} / {median(wall) * 1000:.1f} / {max(wall) * 1000:.1f} ms")])

if __name__ == "__main__":
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    main()

"""First REPL reply: the REPL's prompt is shown, a message is typed 1 s later, and the time from sending it
(Enter) to the loopback fake model's reply on screen is measured."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, emit
from repl_ready import PROMPT, REPLY, WARMUP, cpu_seconds, pending, quit_repl, sample_repl, spawn

TARGET = 0.15  # seconds after sending
RUNS = 5
IDLE = 1.0  # seconds between the prompt appearing and the message being sent


def reply_once(url: str, home: Path, ws: Path, message: str = "hello there") -> tuple[float, float]:
    """(wall, CPU) seconds from sending `message` and Enter to the reply on screen."""
    child, _ = spawn(url, home, ws)
    try:
        child.expect_exact(PROMPT)
        time.sleep(IDLE)
        cpu = cpu_seconds(child.pid)
        child.send(message + "\r")
        sent = time.perf_counter()
        child.expect_exact(REPLY)
        took = time.perf_counter() - sent
        cpu = cpu_seconds(child.pid) - cpu
        child.expect_exact(PROMPT)  # the turn is over before Ctrl-D
        quit_repl(child)
    finally:
        if child.isalive():
            child.terminate(force=True)
    return took, cpu


def measure_rows(runs: int = RUNS) -> list[Row]:
    what, target = "first REPL reply (after sending)", f"≤ {TARGET:.2f} s"
    missing = pending("repl_reply", what, target)
    if missing:
        return [missing]
    took, cpu = sample_repl(reply_once, runs)
    return [Row("repl_reply", what, f"{took:.3f} s", target, took / TARGET,
                f"median of {runs} after {WARMUP} warm-up; the message is sent {IDLE:g} s after the prompt appears; "
                "CPU: the child's, from sending to the reply (/proc, 10 ms ticks)", cpu=f"{cpu:.3f} s")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))

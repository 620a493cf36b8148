"""REPL ready: the time from spawning `cli-agent --model openai/x --api-base <loopback fake>` in a pseudo-terminal
(pexpect) to its `> ` prompt on screen. The child's CPU time at that moment (from /proc) is reported beside it. The
config, the session and the workflows load behind the prompt, so the detail also gives the worst case of that: a
message sent the moment the prompt appears, and the time until its reply is on screen."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import Row, bench_env, cli_command, emit, fake_model_dirs, median

TARGET = 0.25  # seconds
RUNS = 5
WARMUP = 1
PROMPT = "> "
REPLY = "Pong4711"  # what the fake model answers; nothing the REPL prints by itself contains it


def pending(key: str, what: str, target: str) -> Row | None:
    """A pending row when the REPL can't be driven here (no pexpect, no REPL yet), else None."""
    try:
        import pexpect  # noqa: F401
    except ImportError:
        return Row(key, what, "pending: pexpect is not installed (pip install -e '.[dev]')", target, None)
    try:
        import cli_agent.ui.repl.repl  # noqa: F401
    except ImportError:
        return Row(key, what, "pending: the REPL (cli_agent/ui/repl/repl.py) is not there yet", target, None)
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a live process, from /proc/PID/stat (NaN where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def spawn(url: str, home: Path, ws: Path) -> tuple[Any, float]:
    """The REPL in a pty, and the moment it was spawned."""
    import pexpect

    argv = [*cli_command(), "--model", "openai/x", "--api-base", url]
    env = bench_env(home, TERM="xterm", PROMPT_TOOLKIT_NO_CPR="1")
    started = time.perf_counter()
    child = pexpect.spawn(argv[0], argv[1:], cwd=str(ws), env=env, dimensions=(40, 140), encoding="utf-8",
                          timeout=60)
    return child, started


def quit_repl(child: Any) -> None:
    import pexpect

    child.sendcontrol("d")
    child.expect(pexpect.EOF)
    child.close()


def ready_and_answered(url: str, home: Path, ws: Path) -> tuple[float, float, float]:
    """(prompt on screen from spawn, CPU then, the reply to a message sent at once, from sending) in seconds."""
    child, started = spawn(url, home, ws)
    try:
        child.expect_exact(PROMPT)
        wall = time.perf_counter() - started
        cpu = cpu_seconds(child.pid)
        child.send("ping\r")
        sent = time.perf_counter()
        child.expect_exact(REPLY)
        answered = time.perf_counter() - sent
        child.expect_exact(PROMPT)  # a Ctrl-D sent before the prompt is back is lost (the terminal is cooked)
        quit_repl(child)
    finally:
        if child.isalive():
            child.terminate(force=True)
    return wall, cpu, answered


def sample_repl(once: Callable[[str, Path, Path], tuple[float, float]], runs: int) -> tuple[float, float]:
    """Medians of (wall, CPU) over `runs` calls of `once(url, home, ws)` after WARMUP, in a fresh temp home and
    workspace with the loopback fake model."""
    with fake_model_dirs(REPLY) as (url, home, ws):
        for _ in range(WARMUP):
            once(url, home, ws)
        samples = [once(url, home, ws) for _ in range(runs)]
    return median([s[0] for s in samples]), median([s[1] for s in samples])


def measure_rows(runs: int = RUNS) -> list[Row]:
    what, target = "REPL ready (spawn to `> `)", f"≤ {TARGET:.2f} s"
    missing = pending("repl_ready", what, target)
    if missing:
        return [missing]
    answers: list[float] = []

    def once(url: str, home: Path, ws: Path) -> tuple[float, float]:
        wall, cpu, answered = ready_and_answered(url, home, ws)
        answers.append(answered)
        return wall, cpu

    wall, cpu = sample_repl(once, runs)
    return [Row("repl_ready", what, f"{wall:.3f} s", target, wall / TARGET,
                f"median of {runs} after {WARMUP} warm-up; CPU: the child's user + system time (/proc) when the "
                f"prompt appears; a message sent the moment the prompt appears waits for the start-up behind it "
                f"(config, session, workflows): answered {median(answers[WARMUP:]):.3f} s after sending (median)",
                cpu=f"{cpu:.3f} s")]


if __name__ == "__main__":
    emit(measure_rows(int(sys.argv[1]) if len(sys.argv) > 1 else RUNS))

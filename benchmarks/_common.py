"""What every benchmark shares: child processes measured one by one, medians, the result row, the environment.

A child process is measured with `os.wait4`, which gives that child's own CPU time and peak RSS (what
`/usr/bin/time -f %M` reports), while wall time is taken with `time.perf_counter` around spawn and reap.
Children run with their bytecode cached (`PYTHONPYCACHEPREFIX` in the temp dir) as in any pip-installed copy,
even when the caller sets `PYTHONDONTWRITEBYTECODE`, and with `CLI_AGENT_HOME` in a temp folder, so the
benchmarks leave nothing in the user's dirs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

__all__ = ["REPO", "Row", "Sample", "bench_env", "cli_command", "corpus_dir", "emit", "fake_model_dirs", "load_note",
           "measure", "measure_ok", "median", "python_command"]

REPO = Path(__file__).resolve().parents[1]
PYCACHE = Path(tempfile.gettempdir()) / "cli-agent-bench-pycache"


@dataclass(frozen=True)
class Sample:
    """One child process: wall seconds, CPU seconds (user + system), peak RSS in KiB, exit code, stdout."""

    wall: float
    cpu: float
    rss_kib: int
    code: int
    out: str


@dataclass(frozen=True)
class Row:
    """One line of the results table. `ratio` is measured / target for a ceiling (≤ 1 meets it) and target /
    measured for a floor such as a rate (≤ 1 meets it too)."""

    key: str
    what: str
    measured: str
    target: str
    ratio: float | None  # None: not measured (pending)
    detail: str = ""
    cpu: str = ""  # the same figure in CPU time: what the wall time would be on an idle machine, roughly

    @property
    def met(self) -> bool | None:
        return None if self.ratio is None else self.ratio <= 1.0

    def status(self) -> str:
        return {None: "pending", True: "met", False: "missed"}[self.met]


def emit(rows: Sequence[Row]) -> None:
    """Print each row for a person, then one JSON line per row for `benchmarks/run`."""
    for row in rows:
        ratio = "n/a" if row.ratio is None else f"{row.ratio:.2f}"
        cpu = f"; in CPU time {row.cpu}" if row.cpu else ""
        print(f"{row.what}: {row.measured} (target {row.target}, ratio {ratio}, {row.status()}{cpu})")
        if row.detail:
            print(f"    {row.detail}")
    for row in rows:
        print("ROW " + json.dumps(asdict(row)))


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def load_note() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f} (1 min) / {five:.1f} (5 min) on {os.cpu_count()} cores"


def corpus_dir(name: str) -> Path:
    """A folder of shared/corpora, which sits beside the repository."""
    return Path(__file__).resolve().parents[2] / "shared" / "corpora" / name


def bench_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("CLI_AGENT_") and k not in ("CI", "PYTHONDONTWRITEBYTECODE")}
    env |= {"CLI_AGENT_HOME": str(home), "PYTHONPYCACHEPREFIX": str(PYCACHE), "NO_COLOR": "1"}
    env |= extra
    return env


def python_command() -> list[str]:
    return [sys.executable]


def cli_command() -> list[str]:
    """The installed `cli-agent` script beside this interpreter (what a user runs), else `python -m cli_agent`."""
    script = Path(sys.executable).with_name("cli-agent")
    found = script if script.exists() else shutil.which("cli-agent")
    return [str(found)] if found else [sys.executable, "-m", "cli_agent"]


@contextlib.contextmanager
def fake_model_dirs(reply: str) -> Iterator[tuple[str, Path, Path]]:
    """(url, home, workspace): the loopback fake model answering `reply`, and a fresh home and workspace."""
    from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

    with tempfile.TemporaryDirectory() as tmp, FakeOpenAIServer(instant=reply) as server:
        home, ws = Path(tmp, "home"), Path(tmp, "ws")
        ws.mkdir()
        yield server.url, home, ws


def measure_ok(argv: Sequence[str], home: Path, ws: Path, expect: str, what: str) -> Sample:
    """`measure` a child that must exit 0 with `expect` in its output; else the benchmark stops, saying why."""
    sample = measure(argv, env=bench_env(home), cwd=ws)
    if sample.code != 0 or expect not in sample.out:
        raise SystemExit(f"{what} failed (exit {sample.code}): {sample.out[-500:]}")
    return sample


def measure(argv: Sequence[str], *, env: dict[str, str], cwd: Path, stdin_text: str | None = None,
            timeout: float = 120.0) -> Sample:
    """Run one child to the end; its own wall time, CPU time and peak RSS."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as given:
        if stdin_text is not None:
            given.write(stdin_text.encode())
            given.seek(0)
        started = time.perf_counter()
        proc = subprocess.Popen(list(argv), cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=given if stdin_text is not None else subprocess.DEVNULL)
        killer = threading.Timer(timeout, proc.kill)
        killer.start()
        try:
            _, status, usage = os.wait4(proc.pid, 0)  # blocks: no polling, no CPU taken from the child
        finally:
            killer.cancel()
        wall = time.perf_counter() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode(errors="replace")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, proc.returncode, text)

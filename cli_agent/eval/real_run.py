"""Running the real suite's tasks: each one as a user would, `cli-agent -p PROMPT --yes` in its own process, with
the project's test venv activated; `workers` of them side by side, or one shard of them (`--shard I/N`).

    options = RunOptions(model="local", attempts=3)
    runs = planned(tasks, ("json",), ("all",), shard=(2, 4))    # the runs of shard 2 of 4
    results = run_all(runs, options, workers=2, on_result=print)

A shard holds every N-th run of the whole plan (tasks x protocols x variants, in the suite's order), starting at
its number: shards of one plan are disjoint and together are the plan, whatever the machine each one runs on.
Ctrl-C or SIGTERM ends the whole suite: the runs under way are ended (their processes, which this module started,
are terminated) and nothing more starts.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from pathlib import Path

from cli_agent.contracts import RunFinished, StopReason, ToolCallsProposed, dataclass, errors
from cli_agent.eval import real_sdist
from cli_agent.eval.real import TASK_TIMEOUT_S, RealResult, RealTask, grade, prepare, test_env, variant_settings
from cli_agent.history import read_trace

# the run's own process gets this much more than its --timeout: its start, the model's server, its end
GRACE_S = 120.0


@dataclass(frozen=True)
class RunOptions:
    model: str = "local"
    api_base: str | None = None
    attempts: int = 1
    max_steps: int = 12
    timeout: float = TASK_TIMEOUT_S
    keep: Path | None = None  # keep each run's trace here
    cache: Path | None = None  # the suite's cache (sdists, venvs); default real_sdist.suite_cache()


@dataclass(frozen=True)
class Run:
    task: RealTask
    protocol: str
    variant: str


def shard_of(text: str) -> tuple[int, int]:
    """`I/N` as (I, N), 1 <= I <= N; UsageError otherwise."""
    index, _, count = text.partition("/")
    try:
        shard = int(index), int(count)
    except ValueError:
        shard = (0, 0)
    if not 1 <= shard[0] <= shard[1]:
        raise errors.UsageError(f"--shard takes I/N with 1 <= I <= N (e.g. 2/4), not {text!r}")
    return shard


def planned(tasks: Sequence[RealTask], protocols: Sequence[str], variants: Sequence[str],
            shard: tuple[int, int] = (1, 1)) -> list[Run]:
    for variant in variants:
        variant_settings(variant)  # refuse a bad variant before any model runs
    plan = [Run(t, p, v) for p in protocols for v in variants for t in tasks]
    index, count = shard
    return plan[index - 1::count]


def ready(runs: Sequence[Run], cache: Path | None = None,
          on_project: Callable[[str], None] | None = None) -> None:
    """Each project of `runs` fetched and its venv made, one after the other, before any model runs: a release
    that cannot be fetched ends the suite first (exit 2), and the workers then only copy."""
    cache = cache or real_sdist.suite_cache()
    for project in dict.fromkeys(run.task.project for run in runs):
        real_sdist.fetch(project, cache)
        real_sdist.project_venv(project, cache)
        if on_project is not None:
            on_project(project.pin)


def run_all(runs: Sequence[Run], options: RunOptions, *, workers: int = 1,
            on_result: Callable[[RealResult], None] | None = None) -> list[RealResult]:
    """Every run, `workers` at a time; results in the plan's order. An interrupt ends the runs under way."""
    children = _Children()
    results: dict[int, RealResult] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="real-task")
    pending: dict[Future[RealResult], int] = {}
    try:
        for index, run in enumerate(runs):
            pending[pool.submit(run_one, run, options, children)] = index
        while pending:
            done, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for future in done:
                results[pending.pop(future)] = result = future.result()
                if on_result is not None:
                    on_result(result)
    except BaseException:
        children.stop_all()
        for future in pending:
            future.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[i] for i in sorted(results)]


class _Children:
    """The run processes under way, to end them when the suite is interrupted."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._live: set[subprocess.Popen[bytes]] = set()
        self.stopped = False

    def start(self, argv: list[str], **kwargs: object) -> subprocess.Popen[bytes]:
        with self._lock:
            if self.stopped:
                raise errors.Interrupted("the suite was stopped")
            proc = subprocess.Popen(argv, **kwargs)  # type: ignore[call-overload]
            self._live.add(proc)
            return proc  # type: ignore[no-any-return]

    def done(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._live.discard(proc)

    def stop_all(self) -> None:
        with self._lock:
            self.stopped = True
            live = list(self._live)
        for proc in live:
            proc.terminate()
        for proc in live:
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()


def run_one(run: Run, options: RunOptions, children: _Children | None = None) -> RealResult:
    """One task run in its own workspace and venv, graded by the project's tests."""
    task = run.task
    result = RealResult(task.name, task.kind, run.protocol, run.variant, project=task.project.pin)
    cache = options.cache or real_sdist.suite_cache()
    (cache / "runs").mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=f"{task.name}-", dir=cache / "runs") as tmp:
        folder = Path(tmp)
        prepared = prepare(task, folder, cache)
        trace = folder / "trace.jsonl"
        started = time.monotonic()
        code = _cli(run, options, prepared.workspace, prepared.venv, folder, trace, children or _Children())
        result.seconds = time.monotonic() - started
        _read_trace(result, trace, code)
        result.why = grade(task, prepared)
        result.passed = not result.why
        if options.keep is not None and trace.is_file():
            options.keep.mkdir(parents=True, exist_ok=True)
            kept = options.keep / f"{task.name}.{run.protocol}.{run.variant}.trace.jsonl"
            kept.write_bytes(trace.read_bytes())
            result.trace = str(kept)
        if result.passed and result.exit_code != 0:
            result.why = f"passed, but the run ended with exit {result.exit_code}"
    return result


def _cli(run: Run, options: RunOptions, workspace: Path, venv: Path, folder: Path, trace: Path,
         children: _Children) -> int:
    """`cli-agent -p PROMPT --yes` in the workspace, the venv activated; its exit code."""
    config = folder / "variant.toml"
    config.write_text("".join(f"{k} = {'true' if v else 'false'}\n" for k, v in variant_settings(run.variant).items()),
                      encoding="utf-8")
    argv = [sys.executable, "-m", "cli_agent", "-p", run.task.prompt, "-C", str(workspace), "--yes",
            "--model", options.model, "--protocol", run.protocol, "--max-steps", str(options.max_steps),
            "--timeout", str(options.timeout), "--trace", str(trace), "--attempts", str(options.attempts),
            "--config", str(config), "--output", "json"]
    if options.api_base:
        argv += ["--api-base", options.api_base]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONHOME", "VIRTUAL_ENV")}
    activated = test_env(venv, Path(env.get("HOME", str(folder))))
    env |= {"PATH": f"{activated['PATH'].split(':', 1)[0]}:{env.get('PATH', '/usr/bin:/bin')}",
            "VIRTUAL_ENV": activated["VIRTUAL_ENV"]}
    with open(folder / "output.txt", "wb") as out:
        proc = children.start(argv, cwd=workspace, env=env, stdout=out, stderr=subprocess.STDOUT,
                              stdin=subprocess.DEVNULL)
        try:
            return proc.wait(timeout=options.timeout + GRACE_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            return proc.wait()
        finally:
            children.done(proc)


def _read_trace(result: RealResult, trace: Path, code: int) -> None:
    """The run's figures from its trace (its last RunFinished and the calls it proposed)."""
    result.exit_code = code
    try:
        runs = read_trace(trace, complete=False).runs if trace.is_file() else []
    except (OSError, errors.CliAgentError):
        runs = []
    events = runs[-1] if runs else []
    finished = next((e for e in reversed(events) if isinstance(e, RunFinished)), None)
    if finished is not None:
        if finished.stop_reason in (StopReason.INTERRUPTED, StopReason.TERMINATED):
            raise errors.Interrupted(f"the run of {result.task} was stopped")
        result.steps, result.tokens = finished.steps, finished.usage.total_tokens
        result.verified, result.attempt = finished.verified, finished.attempt
    result.tools = [c.name for e in events if isinstance(e, ToolCallsProposed) for c in e.calls]

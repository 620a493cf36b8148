"""`cli-agent eval --suite real`: real tasks on real code (`real.toml`, projects in `real_projects/`), each graded
by its own command, per protocol and per harness variant.

    tasks = load_real_tasks(only=None)
    results = run_real(tasks, model="local", protocols=("json",), variants=("all",))
    result.passed, result.steps, result.tokens, result.seconds, result.why

A task's workspace is a fresh copy of its project with the task's `break` edits applied (each `old` must occur
exactly once, else the task is refused as drifted: exit 2). The model runs through a real session, changes
approved, nobody asked. Then the project's own `tests/` are put back as they were (the model may have changed
them) and the check runs with the workspace first on PYTHONPATH, 60 s at most: exit 0 is a pass. Each project's
`tests/` holds its own test suite (`pytest -q` at the project's root runs it, so verification finds it) beside the
tasks' `check_*.py` graders, which pytest does not collect.

Variants switch harness help off to measure it: `all` (everything on), `none` (everything off), and `-NAME` for
one switch off (`-read_before_edit`, `-loose_edits`, `-task_files`, `-repo_map`, `-syntax_check`, `-verify`).
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors
from cli_agent.validated.checked import rule
from cli_agent.validated.reader import load_checked, read_toml

if TYPE_CHECKING:
    from cli_agent.contracts.events import Event

__all__ = ["SWITCHES", "RealResult", "RealTask", "load_real_tasks", "run_real", "variant_settings"]

SWITCHES = ("read_before_edit", "loose_edits", "task_files", "repo_map", "syntax_check", "verify")
CHECK_TIMEOUT_S = 60
# each task's run, candidates included: a real task is worth 3 minutes of a 2-core machine, its session's start and
# end (the model's server, the sandbox probe) included, so the run itself gets 5 s less
TASK_TIMEOUT_S = 175.0


@dataclass(frozen=True)
class RealTask:
    name: str
    kind: str
    project: str
    prompt: str
    check: str
    breaks: tuple[tuple[str, str, str], ...] = ()  # (file, old, new)
    solve: tuple[tuple[str, str, str], ...] = ()  # a reference solution of a feature task, for the suite's tests


@dataclass
class RealResult:
    task: str
    kind: str
    protocol: str
    variant: str
    passed: bool = False
    why: str = ""
    exit_code: int | None = None
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    tools: list[str] = field(default_factory=list)
    trace: str = ""  # where the run's trace was kept (`--keep DIR`)
    verified: bool | None = None  # the harness's own verdict (cli_agent.agent.verify)
    attempt: int = 0  # the candidate kept (`--attempts`; 0: the run's own change)

    def to_dict(self) -> dict[str, Any]:
        return {k: round(v, 3) if isinstance(v, float) else v for k, v in self.__dict__.items()}


def _root() -> Path:
    return Path(str(resources.files("cli_agent") / "eval"))


@dataclass(frozen=True, kw_only=True)
class _Edit:
    file: str
    old: str
    new: str


@dataclass(frozen=True, kw_only=True)
class _Task:
    """A `[[task]]` of real.toml, as `checked` checks it."""

    name: str
    kind: str
    project: str
    prompt: str
    check: str
    breaks: tuple[_Edit, ...] = rule((), alias="break")  # `break` is no Python name
    solve: tuple[_Edit, ...] = ()


@dataclass(frozen=True, kw_only=True)
class _Suite:
    task: tuple[_Task, ...] = rule(min_length=1)


def load_real_tasks(only: str | None = None) -> list[RealTask]:
    toml = read_toml(_root() / "real.toml", "cli_agent/eval/real.toml", errors.UsageError)
    tasks = [RealTask(t.name, t.kind, t.project, t.prompt, t.check, tuple((e.file, e.old, e.new) for e in t.breaks),
                      tuple((e.file, e.old, e.new) for e in t.solve))
             for t in load_checked(_Suite, toml, errors.UsageError).task]
    return [t for t in tasks if only is None or only in t.name]


def variant_settings(variant: str) -> dict[str, bool]:
    if variant == "all":
        return dict.fromkeys(SWITCHES, True)
    if variant == "none":
        return dict.fromkeys(SWITCHES, False)
    name = variant.removeprefix("-")
    if not variant.startswith("-") or name not in SWITCHES:
        raise errors.UsageError(f"unknown variant {variant!r}: use all, none or -NAME with NAME one of "
                                f"{', '.join(SWITCHES)}")
    return {s: s != name for s in SWITCHES}


def prepare(task: RealTask, into: Path) -> Path:
    """A fresh copy of the task's project with its break edits applied; UsageError if one no longer applies."""
    ws = into / task.project
    shutil.copytree(_root() / "real_projects" / task.project, ws, ignore=shutil.ignore_patterns("__pycache__"))
    apply_edits(task, ws, task.breaks)
    return ws


def apply_edits(task: RealTask, ws: Path, edits: tuple[tuple[str, str, str], ...]) -> None:
    for file, old, new in edits:
        text = (ws / file).read_text(encoding="utf-8")
        if text.count(old) != 1:
            raise errors.UsageError(f"task {task.name}: the code to break in {file} is not there exactly once "
                                    f"(found {text.count(old)} times); the project drifted from real.toml")
        (ws / file).write_text(text.replace(old, new), encoding="utf-8")


def grade(task: RealTask, ws: Path) -> str:
    """'' when the task's check passes on `ws`, else one line saying why not."""
    pristine = _root() / "real_projects" / task.project / "tests"
    shutil.rmtree(ws / "tests", ignore_errors=True)
    shutil.copytree(pristine, ws / "tests", ignore=shutil.ignore_patterns("__pycache__"))
    try:
        done = subprocess.run([sys.executable, task.check], cwd=ws, capture_output=True, text=True,
                              timeout=CHECK_TIMEOUT_S, env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ws),
                                                           "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"})
    except subprocess.TimeoutExpired:
        return f"{task.check} timed out after {CHECK_TIMEOUT_S} s"
    if done.returncode == 0:
        return ""
    last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
    return f"{task.check}: {last[:160]}"


def run_one(task: RealTask, *, model: str, protocol: str, variant: str, api_base: str | None = None,
            max_steps: int = 12, timeout: float = TASK_TIMEOUT_S, keep: Path | None = None,
            attempts: int = 1) -> RealResult:
    from cli_agent.config.settings import Settings
    from cli_agent.contracts.events import RunFinished, StopReason, ToolCallsProposed
    from cli_agent.session.session import drive, open_session
    from cli_agent.validated.checked import check

    result = RealResult(task.name, task.kind, protocol, variant)
    with tempfile.TemporaryDirectory(prefix="cli-agent-real-") as tmp:
        ws = prepare(task, Path(tmp))
        settings = check(Settings, {
            "model": model, "api_base": api_base, "workspace": str(ws), "yes": True, "max_steps": max_steps,
            "timeout": timeout, "protocol": protocol, "trace": str(Path(tmp) / "trace.jsonl"),
            "attempts": attempts, **variant_settings(variant)})
        started = time.monotonic()
        session = open_session(settings, interactive=False, record=False)
        events: list[Event] = []
        try:
            finished: RunFinished = drive(session.run(task.prompt, None), session.trace, events.append)
        finally:
            session.close()
        if finished.stop_reason in (StopReason.INTERRUPTED, StopReason.TERMINATED):
            stopped = finished.error()
            assert stopped is not None
            raise stopped  # Ctrl-C or SIGTERM ends the suite, not just this task
        result.seconds = time.monotonic() - started
        result.exit_code, result.steps = finished.exit_code, finished.steps
        result.verified, result.attempt = finished.verified, finished.attempt
        result.tokens = finished.usage.total_tokens
        result.tools = [c.name for e in events if isinstance(e, ToolCallsProposed) for c in e.calls]
        result.why = grade(task, ws)
        result.passed = not result.why
        if keep is not None:
            result.trace = str(_kept(Path(tmp) / "trace.jsonl", keep, f"{task.name}.{protocol}.{variant}"))
        if result.passed and finished.exit_code != 0:
            result.why = f"passed, but the run ended with exit {finished.exit_code}: {finished.message[:120]}"
    return result


def _kept(trace: Path, folder: Path, name: str) -> Path:
    """The run's trace copied into `folder` (made if need be) as NAME.trace.jsonl, to read or replay later."""
    folder.mkdir(parents=True, exist_ok=True)
    target = folder / f"{name}.trace.jsonl"
    shutil.copyfile(trace, target)
    return target


def run_real(tasks: list[RealTask], *, model: str, protocols: tuple[str, ...], variants: tuple[str, ...],
             api_base: str | None = None, on_result: Any = None, keep: Path | None = None,
             attempts: int = 1) -> list[RealResult]:
    for variant in variants:
        variant_settings(variant)  # refuse a bad variant before any model runs
    results = []
    for protocol in protocols:
        for variant in variants:
            for task in tasks:
                result = run_one(task, model=model, protocol=protocol, variant=variant, api_base=api_base,
                                 keep=keep, attempts=attempts)
                results.append(result)
                if on_result is not None:
                    on_result(result)
    return results

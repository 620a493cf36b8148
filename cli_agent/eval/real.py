"""`cli-agent eval --suite real`: real tasks on released projects (`real.toml`), each graded by the project's own
tests, per protocol and per harness variant.

    tasks = load_real_tasks(only=None)
    results = run_real(tasks, RunOptions(model="local"), workers=2, shard=(1, 4))
    result.passed, result.exit_code, result.verified, result.attempt, result.why

A task names its project as `name==version` (a `[[project]]` of the suite) and a change (`change`: edits whose
`old` must occur exactly once, else the task is refused as drifted: exit 2). Its workspace is the project's
released sdist, fetched through pip into the suite's cache (`real_sdist`) and unpacked unchanged, with the change
applied: a bug put in, or a feature taken out that the prompt asks for. The reference fix is the project as it
ships: the files the change touched, as released.

The run is what a user would run: `cli-agent -p PROMPT --yes` in the workspace, a process of its own, with the
project's test venv (outside the workspace) first on PATH and in VIRTUAL_ENV. Then the project's test files are put
back as shipped (the model may have changed them) and the task's `check` (pytest arguments, or `python -m
unittest`'s for a project whose `runner` is unittest and whose venv has no pytest) runs in that venv,
60 s at most: exit 0 is a pass. A run that ended "done" (exit 0) while the check fails is counted apart: the
harness claimed a success it did not have.

Variants switch harness help off to measure it: `all` (everything on), `none` (everything off), and `-NAME` for
one switch off (`-read_before_edit`, `-loose_edits`, `-task_files`, `-repo_map`, `-syntax_check`, `-verify`), and
`+NAME` for everything on and one choice that is off by default turned on (`+rewrite_first`); a variant is a config
file given with `--config`.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import tempfile
from dataclasses import field, replace
from importlib import resources
from pathlib import Path
from typing import Any

from cli_agent.contracts import dataclass, errors
from cli_agent.eval import real_sdist
from cli_agent.eval.real_sdist import Project
from cli_agent.validated import load_checked, read_toml, rule

SWITCHES = ("read_before_edit", "loose_edits", "task_files", "repo_map", "syntax_check", "verify")
CHOICES = ("rewrite_first",)  # off by default; `+NAME` turns one on
CHECK_TIMEOUT_S = 60
# each task's run, candidates included: a real task is worth 3 minutes of a 2-core machine, its session's start and
# end (the model's server, the sandbox probe) included, so the run itself gets 5 s less
TASK_TIMEOUT_S = 175.0

Edit = tuple[str, str, str]  # (file, old, new)


@dataclass(frozen=True)
class RealTask:
    name: str
    kind: str
    project: Project
    prompt: str
    check: str  # pytest arguments (unittest's for a unittest project), run at the project's root in its venv
    change: tuple[Edit, ...] = ()

    @property
    def files(self) -> tuple[str, ...]:
        """The files the change touches: the reference fix puts them back as they ship."""
        return tuple(dict.fromkeys(file for file, _, _ in self.change))


@dataclass
class RealResult:
    task: str
    kind: str
    protocol: str
    variant: str
    project: str = ""  # name==version
    passed: bool = False
    why: str = ""
    exit_code: int | None = None
    steps: int = 0
    tokens: int = 0
    seconds: float = 0.0
    tools: list[str] = field(default_factory=list)
    trace: str = ""  # where the run's trace was kept (`--keep DIR`)
    verified: bool | None = None  # the harness's own verdict (cli_agent.agent.judge.verify)
    attempt: int = 0  # the candidate kept (`--attempts`; 0: the run's own change)

    @property
    def done_failing(self) -> bool:
        """The run ended "done" (exit 0) while the project's tests fail: a success claimed, not had."""
        return self.exit_code == 0 and not self.passed

    def to_dict(self) -> dict[str, Any]:
        row = {k: round(v, 3) if isinstance(v, float) else v for k, v in self.__dict__.items()}
        return row | {"done_failing": self.done_failing}


def _root() -> Path:
    return Path(str(resources.files("cli_agent") / "eval"))


@dataclass(frozen=True, kw_only=True)
class _Edit:
    file: str
    old: str
    new: str


@dataclass(frozen=True, kw_only=True)
class _Project:
    """A `[[project]]` of real.toml, as `checked` checks it."""

    name: str = rule(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    version: str = rule(pattern=r"^[A-Za-z0-9][A-Za-z0-9.+!-]*$")
    layout: str
    import_root: str = "."
    tests: tuple[str, ...] = rule(min_length=1)
    test_deps: tuple[str, ...] = ("pytest",)
    pip_args: tuple[str, ...] = ()
    runner: str = rule("pytest", pattern=r"^(pytest|unittest)$")


@dataclass(frozen=True, kw_only=True)
class _Task:
    """A `[[task]]` of real.toml."""

    name: str
    kind: str
    project: str  # name==version
    prompt: str
    check: str
    change: tuple[_Edit, ...] = rule(min_length=1)


@dataclass(frozen=True, kw_only=True)
class _Suite:
    project: tuple[_Project, ...] = rule(min_length=1)
    task: tuple[_Task, ...] = rule(min_length=1)


def load_real_tasks(only: str | None = None, suite: Path | None = None) -> list[RealTask]:
    """The tasks of `suite` (default: the packaged real.toml) whose name contains `only`."""
    path = suite or _root() / "real.toml"
    where = str(suite) if suite is not None else "cli_agent/eval/real.toml"
    checked = load_checked(_Suite, read_toml(path, where, errors.UsageError), errors.UsageError)
    projects = {f"{p.name}=={p.version}": Project(p.name, p.version, p.layout, p.import_root, p.tests, p.test_deps,
                                                  p.pip_args, p.runner) for p in checked.project}
    tasks = []
    for t in checked.task:
        if t.project not in projects:
            raise errors.UsageError(f"{where}: task {t.name} names {t.project}, which is no [[project]] of the suite")
        tasks.append(RealTask(t.name, t.kind, projects[t.project], t.prompt, t.check,
                              tuple((e.file, e.old, e.new) for e in t.change)))
    return [t for t in tasks if only is None or only in t.name]


def variant_settings(variant: str) -> dict[str, bool]:
    if variant == "all":
        return dict.fromkeys(SWITCHES, True)
    if variant == "none":
        return dict.fromkeys(SWITCHES, False)
    name = variant[1:]
    if variant.startswith("+") and name in CHOICES:
        return {**dict.fromkeys(SWITCHES, True), name: True}
    if not variant.startswith("-") or name not in SWITCHES:
        raise errors.UsageError(f"unknown variant {variant!r}: use all, none, -NAME with NAME one of "
                                f"{', '.join(SWITCHES)}, or +NAME with NAME one of {', '.join(CHOICES)}")
    return {s: s != name for s in SWITCHES}


@dataclass(frozen=True)
class Prepared:
    workspace: Path  # the project's sdist unpacked, the task's change applied
    venv: Path  # its test venv, outside the workspace
    pristine: Path  # the sdist unpacked as it ships, to put its tests back before grading


def reference_fix(task: RealTask, prepared: Prepared) -> None:
    """Put the task's reference fix in the workspace: the files its change touched, as the project ships them."""
    for name in task.files:
        shutil.copy2(prepared.pristine / name, prepared.workspace / name)


def prepare(task: RealTask, into: Path, cache: Path | None = None) -> Prepared:
    """The task's workspace and test venv under `into` (the sdist fetched and the project's venv made the first
    time); UsageError if the change no longer applies."""
    cache = cache or real_sdist.suite_cache()
    project = task.project
    sdist = real_sdist.fetch(project, cache)
    pristine = real_sdist.unpack(sdist, into / "pristine")
    workspace = real_sdist.unpack(sdist, into / "work")
    apply_edits(task, workspace, task.change)
    base = real_sdist.project_venv(project, cache)
    venv = real_sdist.task_venv(base, into / "venv", (workspace / project.import_root).resolve())
    return Prepared(workspace, venv, pristine)


def apply_edits(task: RealTask, ws: Path, edits: tuple[Edit, ...]) -> None:
    for file, old, new in edits:
        path = ws / file
        text = path.read_text(encoding="utf-8") if path.is_file() else ""
        if text.count(old) != 1:
            raise errors.UsageError(f"task {task.name}: the code to change in {file} is not there exactly once "
                                    f"(found {text.count(old)} times); {task.project.pin} drifted from the suite")
        path.write_text(text.replace(old, new), encoding="utf-8")


def test_env(venv: Path, home: Path) -> dict[str, str]:
    """The environment a user with the project's venv activated has: its bin first on PATH, VIRTUAL_ENV set."""
    return {"PATH": f"{venv / 'bin'}:/usr/local/bin:/usr/bin:/bin", "VIRTUAL_ENV": str(venv), "HOME": str(home),
            "PYTHONDONTWRITEBYTECODE": "1", "LANG": "C.UTF-8"}


def grade(task: RealTask, prepared: Prepared) -> str:
    """'' when the task's check passes on the workspace, else one line saying why not. The project's test files
    are put back as shipped first."""
    ws = prepared.workspace
    for name in task.project.tests:
        shipped, there = prepared.pristine / name, ws / name
        if there.is_dir() and not there.is_symlink():
            shutil.rmtree(there)
        elif there.exists() or there.is_symlink():
            there.unlink()
        if shipped.is_dir():
            shutil.copytree(shipped, there)
        elif shipped.is_file():
            shutil.copy2(shipped, there)
    # --color=no after a configuration's addopts (wcwidth's tox.ini asks for --color=yes): the line is plain text
    python = str(real_sdist.venv_python(prepared.venv))
    runner = task.project.runner
    argv = [python, "-m", "unittest", *shlex.split(task.check)] if runner == "unittest" else \
        [python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--color=no", *shlex.split(task.check)]
    with tempfile.TemporaryDirectory(prefix="cli-agent-grade-") as home:
        try:
            done = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=CHECK_TIMEOUT_S,
                                  env=test_env(prepared.venv, Path(home)))
        except subprocess.TimeoutExpired:
            return f"{runner} {task.check} timed out after {CHECK_TIMEOUT_S} s"
    if done.returncode == 0:
        return ""
    lines = (done.stdout + done.stderr).strip().splitlines() or [f"exit {done.returncode}"]
    return f"{runner} {task.check}: {lines[-1][:160]}"


def with_project(task: RealTask, **changes: Any) -> RealTask:
    """The task with its project changed (a test points it at a local index)."""
    return replace(task, project=replace(task.project, **changes))

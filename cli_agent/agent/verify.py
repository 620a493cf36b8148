"""Verification: after a run changed files and the model says it is done, the project's own tests judge the work.

The harness, not the prompt, runs them: `Verifier.check(changed, deadline, task)` first checks the examples the task
states (`task_examples`, for a pytest project), then runs the tests nearest the change (the test files that import
a changed module, or a changed test file itself), then the whole test command, all in the command sandbox.
Whatever the tests write (caches, `.pyc`, reports) is thrown away with the staging layer: a test run changes
nothing in the workspace and needs no approval. Its verdict is a `TestRun`: passed or not, the runner's
summary line, and the failures trimmed to what a model needs (the assertion lines, the last frames in the
workspace, the short summary), bounded in size.

Verification is skipped (`Verifier` is None) with no test command, with `verify = false`, without a command
sandbox, or when every command is asked for (`commands = "ask"`, `sandbox = "off"`): then a run's `verified` is
null.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import time
from collections.abc import Generator, Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.agent import task_examples
from cli_agent.fs.hostfile import read_regular_or_none
from cli_agent.prompt.project_tests import is_test_path
from cli_agent.prompt.task_files import named_files

if TYPE_CHECKING:
    from cli_agent.config.settings import Settings
    from cli_agent.fs.workspace import Workspace
    from cli_agent.sandbox.process import Outcome
    from cli_agent.tools.context import CommandSetup

__all__ = ["TestRun", "Verifier", "nearest_tests", "summary_line", "trimmed_failures", "verifier_for"]

EXAMPLES = "the task's examples"  # what checked them, as a verdict's command says
FEEDBACK_CHARS = 4000  # the most of a failing run the model is shown
_SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache",
                        ".pytest_cache", "build", "dist", ".cli-agent"})
_MAX_TEST_FILES = 2000  # test files looked at for imports
_PYTEST_NO_TESTS = 5  # pytest's exit code when it collected no test
_SUMMARY = re.compile(r"^=+ (?P<text>.*\b(passed|failed|error|errors|no tests ran|skipped|deselected)\b.*) =+$")
_ASSERTION = re.compile(r"^E\s")
_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): ")


@dataclass(frozen=True)
class TestRun:
    command: str
    passed: bool
    summary: str  # the runner's closing line ("1 failed, 4 passed in 0.12s"), else "exit code N"
    failures: str  # what the model is shown of a failing run ("" when it passed)
    timed_out: bool = False
    ran: bool = True  # False: the runner found no test to run (pytest's exit code 5): nothing was verified
    examples: bool = False  # the verdict of the task's own examples (`task_examples`), not of the project's tests

    __test__ = False  # not a pytest test class


def summary_line(output: str, exit_code: int | None, timed_out: bool) -> str:
    """pytest's closing `=== ... ===` line, else the last line that says how many passed or failed, else the exit."""
    for line in reversed(output.splitlines()):
        match = _SUMMARY.match(line.strip())
        if match:
            return match.group("text").strip()
    for line in reversed(output.splitlines()[-20:]):
        if re.search(r"\b\d+ (passed|failed)\b|\bno tests ran\b|\btest result\b|^(ok|FAIL)\s", line.strip()):
            return line.strip()[:200]
    if timed_out:
        return "timed out"
    return f"exit code {exit_code}"


def trimmed_failures(output: str, limit: int = FEEDBACK_CHARS) -> str:
    """A failing run as the model needs it: from pytest, each failure's header, its `E` lines and the frames that
    point at files (the workspace's; the sandbox runs there), then the short summary; from any other runner, its
    last lines. At most `limit` characters."""
    lines = output.splitlines()
    kept: list[str] = []
    in_failures = in_summary = False
    for line in lines:
        stripped = line.strip()
        if re.match(r"^=+ (FAILURES|ERRORS) =+$", stripped):
            in_failures, in_summary = True, False
            continue
        if re.match(r"^=+ short test summary info =+$", stripped):
            in_failures, in_summary = False, True
            kept.append("short test summary:")
            continue
        if _SUMMARY.match(stripped) or (stripped.startswith("=") and stripped.endswith("=") and in_summary):
            in_failures = in_summary = False
            continue
        if in_summary or (in_failures and (re.match(r"^_{3,} .* _{3,}$", stripped) or _ASSERTION.match(line)
                              or _FRAME.match(line) or stripped.startswith(">"))):
            kept.append(line)
    text = "\n".join(kept) if kept else "\n".join(lines[-60:])
    if len(text) > limit:
        text = "[... earlier lines left out]\n" + text[-limit:]
    return text


def nearest_tests(root: Path, changed: Iterable[str]) -> list[str]:
    """The test files nearest a change: each changed test file, and each test file that imports a changed module
    (`import pkg.mod`, `from pkg.mod import x`, `from pkg import mod`). Workspace-relative, sorted."""
    targets: dict[str, tuple[str, str]] = {}  # module stem -> (dotted path, parent package)
    found: set[str] = set()
    for rel in changed:
        if not rel.endswith(".py"):
            continue
        name = Path(rel).name
        if _is_test_file(name):
            if (root / rel).is_file():
                found.add(rel)
            continue
        parts = Path(rel).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if not parts:
            continue
        targets[parts[-1]] = (".".join(parts), ".".join(parts[:-1]))
    if targets:
        for rel in _test_files(root):
            if rel not in found and _imports_any(root / rel, targets):
                found.add(rel)
    return sorted(found)


def _is_test_file(name: str) -> bool:
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def _test_files(root: Path) -> Iterable[str]:
    count = 0
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(files):
            if _is_test_file(name):
                count += 1
                if count > _MAX_TEST_FILES:
                    return
                yield os.path.relpath(os.path.join(folder, name), root)


def _imports_any(path: Path, targets: dict[str, tuple[str, str]]) -> bool:
    data = read_regular_or_none(path, 256 * 1024)  # a FIFO or a device is skipped, never waited on
    if data is None:
        return False
    text = data.decode("utf-8", errors="replace")
    for stem, (dotted, parent) in targets.items():
        if stem not in text:
            continue
        names = {re.escape(dotted), re.escape(stem)}
        pattern = rf"^\s*(from\s+[\w.]*\b({'|'.join(names)})\s+import\b|import\s+[\w.]*\b({'|'.join(names)})\b)"
        if re.search(pattern, text, re.MULTILINE):
            return True
        if parent and re.search(rf"^\s*from\s+{re.escape(parent)}\s+import\s+[^\n]*\b{re.escape(stem)}\b", text,
                                re.MULTILINE):
            return True
    return False


class Verifier:
    """Runs the project's tests in the command sandbox for a run that changed files."""

    def __init__(self, command: str, setup: CommandSetup, root: Path, rounds: int = 2) -> None:
        self.command = command
        self.setup = setup
        self.root = root
        self.rounds = rounds  # how many times failures go back to the model before the run ends unverified

    def plan(self, changed: Iterable[str]) -> list[str]:
        """The commands to run, in order: the nearest tests (for pytest), then the whole command."""
        commands = []
        if "pytest" in self.command:
            nearest = nearest_tests(self.root, changed)
            if nearest:
                commands.append(f"{self.command} {' '.join(shlex.quote(p) for p in nearest)}")
        commands.append(self.command)
        return commands

    def check(self, changed: Iterable[str], deadline: float, task: str = "") -> Generator[bytes, None, TestRun]:
        """Checks the examples the task states (`task_examples`), then runs the plan until a command fails; yields
        the output as it comes; returns the verdict."""
        changed = tuple(changed)
        stated = self._stated(task, changed)
        held = 0
        if stated is not None:
            found, program = stated
            out = yield from self._sandboxed(program, deadline)
            if out is None:
                return _no_time(EXAMPLES)
            verdicts = task_examples.verdicts(found, out.output)
            failed = [v for v in verdicts if v.ok is False]
            if failed:
                return _examples_failed(failed, len(found))
            held = sum(v.ok is True for v in verdicts)
        run = _no_time(self.command)
        for command in self.plan(changed):
            run = yield from self._run(command, deadline)
            if not run.passed:  # a nearest file that collected nothing goes on to the whole command
                break
        if held and run.passed and run.ran:
            run = replace(run, summary=f"{run.summary}; the task's {held} example(s) hold")
        return run

    def _stated(self, task: str, changed: tuple[str, ...]) -> tuple[tuple[task_examples.Example, ...], str] | None:
        """The task's examples and the program that checks them, for a Python project whose files it names or
        changed; None when there is nothing to check."""
        found = task_examples.examples(task)
        if not found or "pytest" not in self.command:
            return None
        named = named_files(task, self._workspace)
        paths = [p for p in dict.fromkeys((*named, *changed)) if p.endswith(".py") and not is_test_path(p)]
        names, folders = task_examples.modules(self.root, paths)
        if not names:
            return None
        program = task_examples.script(found, names, folders, task_examples.added_names(task))
        return found, f"{self._python()} -c {shlex.quote(program)}"

    @functools.cached_property
    def _workspace(self) -> Workspace:
        from cli_agent.fs.workspace import Workspace
        return Workspace(self.root)

    def _python(self) -> str:
        """The interpreter the tests run with: `X -m pytest`'s X, a `DIR/pytest`'s `DIR/python`, else python3."""
        try:
            words = shlex.split(self.command)
        except ValueError:  # unbalanced quotes: the shell will say so when the tests run
            words = self.command.split()
        if len(words) > 2 and words[1:3] == ["-m", "pytest"]:
            return shlex.quote(words[0])
        if words and words[0].endswith("/pytest"):
            beside = words[0][:-len("pytest")] + "python"
            if (self.root / beside).is_file():
                return shlex.quote(beside)
        return "python3"

    def _sandboxed(self, command: str, deadline: float) -> Generator[bytes, None, Outcome | None]:
        """Runs `command` in the command sandbox until the deadline (None: no time left); nothing it writes is
        kept."""
        from cli_agent.sandbox import run_in_sandbox
        from cli_agent.sandbox.process import Limits

        left = deadline - time.monotonic()
        if left <= 1:
            return None
        setup = self.setup
        assert setup.capability is not None  # the session builds a Verifier only with a sandbox
        limits = Limits(timeout_s=min(setup.max_timeout_s, left), max_processes=setup.policy.max_processes,
                        max_file_bytes=setup.policy.max_file_bytes, head_bytes=4 * 1024, tail_bytes=48 * 1024)
        done = yield from run_in_sandbox(command, setup.capability, setup.policy, limits, lambda _rel, _planned: None,
                                         setup.env_allow)
        return done.outcome

    def _run(self, command: str, deadline: float) -> Generator[bytes, None, TestRun]:
        out = yield from self._sandboxed(command, deadline)
        if out is None:
            return _no_time(command)
        summary = summary_line(out.output, out.exit_code, out.timed_out)
        if out.exit_code == _PYTEST_NO_TESTS and "pytest" in command:
            return TestRun(command, True, summary, "", ran=False)
        passed = out.exit_code == 0 and not out.timed_out
        failures = "" if passed else trimmed_failures(out.output)
        if out.timed_out:
            summary = f"timed out after {out.duration_s:.0f} s ({summary})" if summary != "timed out" else \
                f"timed out after {out.duration_s:.0f} s"
        return TestRun(command, passed, summary, failures, timed_out=out.timed_out)


def _no_time(command: str) -> TestRun:
    return TestRun(command, False, "not run: no time left before the run's deadline", "", timed_out=True)


def _examples_failed(failed: list[task_examples.Verdict], count: int) -> TestRun:
    """The verdict when some of the task's own examples do not hold: each with what it gave."""
    lines = [f"{v.example.expr} should give {v.example.expected}: {v.detail}" for v in failed]
    return TestRun(EXAMPLES, False, f"{len(failed)} of the task's {count} example(s) fail", "\n".join(lines),
                   examples=True)


def verifier_for(settings: Settings, commands: CommandSetup | None, root: Path) -> Verifier | None:
    """The tests that judge a run's changes: with `verify` on, a test command (configured or detected), and a
    command sandbox whose commands run without asking (else verification is off and `verified` stays null)."""
    if not settings.verify or commands is None or commands.capability is None or settings.commands == "ask":
        return None
    from cli_agent.prompt.project_tests import detect_test_command
    command = settings.test_command or detect_test_command(root)
    return Verifier(command, commands, root, settings.verify_rounds) if command else None

"""Verification: after a run changed files and the model says it is done, the project's own tests judge the work.

The harness, not the prompt, runs them: `Verifier.check(changed, deadline, task)` first checks what the task states
(its examples, `task_examples`, and what it says of names, `proof.statements`; in a Python project, even with no
test command), then runs the tests nearest the change (the test files that import a changed module, or a changed
test file itself), then the whole test command, all in the command sandbox.
Whatever the tests write (caches, `.pyc`, reports) is thrown away with the staging layer: a test run changes
nothing in the workspace and needs no approval. Its verdict is a `TestRun`: passed or not, the runner's
summary line, and the failures trimmed to what a model needs (the assertion lines, the last frames in the
workspace, the short summary), bounded in size. A run that died before any test ran (the runner missing or broken,
a broken `conftest.py`, pytest's exit codes 3 and 4, a package the tests need missing) is the third verdict, "the
tests could not run" (`could_not_run`): nothing the model can fix, so it proves nothing either way.

Verification is skipped (`verification_for` gives no `Verifier`, and says why) with `verify = false`, without a
command sandbox, or when every command is asked for (`commands = "ask"`, `sandbox = "off"`): then a run's
`verified` is null, and its `tests` says why.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import time
from collections.abc import Generator, Iterable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.agent.judge import task_examples
from cli_agent.agent.judge.proof import statements as task_statements
from cli_agent.agent.judge.proof.test_output import (
    ASSIGNMENT,
    PYTEST_RUN,
    UNITTEST_RUN,
    could_not_run,
    plain,
    summary_line,
    trimmed_failures,
)
from cli_agent.contracts import dataclass
from cli_agent.fs import Workspace, read_regular_or_none
from cli_agent.prompt import Outline, detect_test_command, is_test_path, named_files
from cli_agent.sandbox import Limits, run_in_sandbox

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.fs import Workspace
    from cli_agent.sandbox import Outcome
    from cli_agent.tools import CommandSetup

__all__ = ["verification_for"]

EXAMPLES = "the task's examples"  # what checked them, as a verdict's command says
COULD_NOT_RUN = "the tests could not run"  # how the third verdict's summary starts
NO_TESTS = "no tests found (set test_command)"
_SKIP_DIRS = frozenset({".git", ".hg", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache",
                        ".pytest_cache", "build", "dist", ".cli-agent"})
_MAX_TEST_FILES = 2000  # test files looked at for imports
_PYTEST_NO_TESTS = 5  # pytest's exit code when it collected no test
# a task that asks for a file to go (or to move): its deletions are its own
_DELETION = re.compile(r"\b(?:delet|remov|drop)\w*|\b(?:renam|mov)\w*\s+(?:(?:the|a|this)\s+)?(?:file|module|folder|"
                       r"directory|package|`?[\w./-]+\.\w+\b)", re.IGNORECASE)


@dataclass(frozen=True)
class TestRun:
    command: str
    passed: bool
    summary: str  # the runner's closing line ("1 failed, 4 passed in 0.12s"), else "exit code N"
    failures: str  # what the model is shown of a failing run ("" when it passed)
    timed_out: bool = False
    ran: bool = True  # False: the runner found no test to run (pytest's exit code 5): nothing was verified
    examples: bool = False  # the verdict of the task's own examples (`task_examples`), not of the project's tests
    broken: bool = False  # the tests could not run (`could_not_run`): `summary` says why; not for the model to fix

    __test__ = False  # not a pytest test class


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
    """Runs the project's tests in the command sandbox for a run that changed files; `command` None: no test command
    is known, and only what the task states is checked (in a Python project)."""

    def __init__(self, command: str | None, setup: CommandSetup, root: Path, rounds: int = 2) -> None:
        self.command = command
        self.setup = setup
        self.root = root
        self.rounds = rounds  # how many times failures go back to the model before the run ends unverified

    def plan(self, changed: Iterable[str]) -> list[str]:
        """The commands to run, in order: the nearest tests (for pytest), then the whole command."""
        if not self.command:
            return []
        commands = []
        if PYTEST_RUN.search(self.command):
            nearest = nearest_tests(self.root, changed)
            if nearest:
                commands.append(f"{self.command} {' '.join(shlex.quote(p) for p in nearest)}")
        commands.append(self.command)
        return commands

    def describe(self, task: str, changed: Iterable[str]) -> str:
        """What a check of `changed` runs, for its first line: `the task's examples, then pytest -q` ("": nothing)."""
        stated = self._stated(task, tuple(changed)) is not None
        return ", then ".join([*([EXAMPLES] if stated else []), *([self.command] if self.command else [])])

    def check(self, changed: Iterable[str], deadline: float, task: str = "", *,
              stated_only: bool = False) -> Generator[bytes, None, TestRun]:
        """Checks what the task states (`task_examples`, `proof.statements`), then runs the plan until a command
        fails; yields the output as it comes; returns the verdict, which names the files the run deleted when the
        task asked for no deletion. `stated_only` (a run that changed nothing): only what the task states is
        checked (`ran` False when it states nothing that could be checked)."""
        changed = tuple(changed)
        run = yield from self._check(changed, deadline, task, stated_only)
        deleted = [p for p in changed if not os.path.lexists(self.root / p)]
        if deleted and not _DELETION.search(task):
            run = replace(run, summary=f"{run.summary}; deleted by this run, though the task asks for no deletion: "
                                       f"{', '.join(deleted[:5])}{' ...' if len(deleted) > 5 else ''}")
        return run

    def _check(self, changed: tuple[str, ...], deadline: float, task: str,
               stated_only: bool) -> Generator[bytes, None, TestRun]:
        stated = self._stated(task, changed)
        held = ""
        if stated is not None:
            found, said, program = stated
            out = yield from self._sandboxed(program, deadline)
            if out is None:
                return _no_time(EXAMPLES)
            verdicts = task_examples.verdicts(found, out.output)
            checked = task_statements.verdicts(said, out.output)
            failed = [(f"{v.example.expr} == {v.example.expected}", v.detail) for v in verdicts if v.ok is False]
            failed += [(v.statement.shown, v.detail) for v in checked if v.ok is False]
            if failed:
                return _examples_failed(failed, len(found) + len(said))
            held = _held(sum(v.ok is True for v in verdicts), sum(v.ok is True for v in checked))
        if stated_only:  # the run changed nothing: what the task states is all there is to check
            return TestRun(EXAMPLES, True, held or "nothing was checked", "", ran=bool(held), examples=True)
        if not self.command:
            return TestRun("", False, NO_TESTS + (f"; {held}" if held else ""), "", ran=False)
        run = _no_time(self.command)
        for command in self.plan(changed):
            run = yield from self._run(command, deadline, changed)
            if not run.passed and not (run.broken and command != self.command):  # the whole command has its say
                break
        if held and run.passed and run.ran:
            run = replace(run, summary=f"{run.summary}; {held}")
        return run

    def states(self, task: str) -> bool:
        """Whether the task states examples, imports or names to check even when a run changed nothing."""
        return self._stated(task, ()) is not None

    def _stated(self, task: str, changed: tuple[str, ...]
                ) -> tuple[tuple[task_examples.Example, ...], tuple[task_statements.Statement, ...], str] | None:
        """What the task states (its examples, its statements about names) and the program that checks it, for a
        Python project whose files it names or changed; None when there is nothing to check."""
        if not self._python_project():
            return None
        found = task_examples.examples(task)
        said = task_statements.statements(task, self.root)
        if not found and not said:
            return None
        named = [p for p in named_files(task, self._workspace) if p.endswith(".py") and not is_test_path(p)]
        edited = [p for p in changed if p.endswith(".py") and not is_test_path(p)]
        names, folders = task_examples.modules(self.root, list(dict.fromkeys((*named, *edited))))
        found = found if names else ()  # an example needs the modules it is about
        if not found and not said:
            return None
        parts = [task_examples.script(found, names, folders, task_examples.added_names(task))] if found else []
        if said:  # the names must be where the task says: in the files it names, else in those the run changed
            places = named or edited or self._defining(said)
            where, under = task_examples.modules(self.root, places)
            exact = [mods[-1] for mods in (task_examples.modules(self.root, [p])[0] for p in places) if mods]
            local = {n.split(".")[0] for n in where} | {s.text.split()[1].split(".")[0] for s in said
                                                        if s.kind == "import"}
            parts.append(task_statements.script(said, where, under, sorted(local), exact))
        return found, said, f"{self._python()} -c {shlex.quote(chr(10).join(parts))}"

    def _defining(self, said: tuple[task_statements.Statement, ...]) -> list[str]:
        """The source files (not tests) that define a name the statements are about: where to look when the task
        names no file and the run changed none but tests."""
        wanted = {word for s in said if s.kind != "import" for word in s.text.split()}
        if not wanted:
            return []
        return list(dict.fromkeys(symbol.path for symbol in Outline(self._workspace).symbols()
                                  if symbol.name.rsplit(".", 1)[-1] in wanted and symbol.path.endswith(".py")
                                  and not is_test_path(symbol.path)))

    def _python_project(self) -> bool:
        if self.command:
            return bool(PYTEST_RUN.search(self.command) or UNITTEST_RUN.search(self.command))
        return any(self.root.glob("*.py")) or (self.root / "pyproject.toml").is_file() or \
            (self.root / "setup.py").is_file() or (self.root / "setup.cfg").is_file()

    @functools.cached_property
    def _workspace(self) -> Workspace:
        return Workspace(self.root)

    def _python(self) -> str:
        """The interpreter the tests run with: `X -m pytest`'s X, a `DIR/pytest`'s `DIR/python`, else python3; after
        the `NAME=value` words the test command starts with (`PYTHONPATH=src`), which the task's checks get too."""
        try:
            words = shlex.split(self.command or "")
        except ValueError:  # unbalanced quotes: the shell will say so when the tests run
            words = (self.command or "").split()
        env = ""
        while words and ASSIGNMENT.fullmatch(words[0]):
            name, _, value = words.pop(0).partition("=")
            env += f"{name}={shlex.quote(value)} "
        if len(words) > 2 and words[1:3] in (["-m", "pytest"], ["-m", "unittest"]):
            return env + shlex.quote(words[0])
        if words and words[0].endswith("/pytest"):
            beside = words[0][:-len("pytest")] + "python"
            if (self.root / beside).is_file():
                return env + shlex.quote(beside)
        return env + "python3"

    def _sandboxed(self, command: str, deadline: float) -> Generator[bytes, None, Outcome | None]:
        """Runs `command` in the command sandbox until the deadline (None: no time left); nothing it writes is
        kept."""
        left = deadline - time.monotonic()
        if left <= 1:
            return None
        setup = self.setup
        assert setup.capability is not None  # the session builds a Verifier only with a sandbox
        limits = Limits(timeout_s=min(setup.max_timeout_s, left), max_processes=setup.policy.max_processes,
                        max_file_bytes=setup.policy.max_file_bytes, head_bytes=4 * 1024, tail_bytes=48 * 1024)
        done = yield from run_in_sandbox(command, setup.capability, setup.policy, limits, lambda _rel, _planned: None,
                                         setup.env_allow)
        return replace(done.outcome, output=plain(done.outcome.output))

    def _run(self, command: str, deadline: float, changed: tuple[str, ...] = ()) -> Generator[bytes, None, TestRun]:
        out = yield from self._sandboxed(command, deadline)
        if out is None:
            return _no_time(command)
        summary = summary_line(out.output, out.exit_code, out.timed_out)
        why = could_not_run(command, out.output, out.exit_code, changed, self.root) if not out.timed_out else ""
        if why:
            return TestRun(command, False, f"{COULD_NOT_RUN}: {why}", trimmed_failures(out.output), ran=False,
                           broken=True)
        if out.exit_code == _PYTEST_NO_TESTS and (PYTEST_RUN.search(command) or UNITTEST_RUN.search(command)):
            return TestRun(command, True, summary, "", ran=False)
        passed = out.exit_code == 0 and not out.timed_out
        failures = "" if passed else trimmed_failures(out.output)
        if out.timed_out:
            summary = f"timed out after {out.duration_s:.0f} s ({summary})" if summary != "timed out" else \
                f"timed out after {out.duration_s:.0f} s"
        return TestRun(command, passed, summary, failures, timed_out=out.timed_out)


def _held(examples: int, statements: int) -> str:
    """`the task's 2 example(s) hold`, `the task's 1 example(s) and 2 statement(s) hold`; "" for none."""
    parts = [*([f"{examples} example(s)"] if examples else []), *([f"{statements} statement(s)"] if statements else [])]
    return f"the task's {' and '.join(parts)} hold" if parts else ""


def _no_time(command: str) -> TestRun:
    return TestRun(command, False, "not run: no time left before the run's deadline", "", timed_out=True)


def _examples_failed(failed: list[tuple[str, str]], count: int) -> TestRun:
    """The verdict when some of what the task states does not hold: the first (`mean([1, 2, 3]) == 2: gave 1.5`)
    in the summary, each with what it gave for the model."""
    more = f" (and {len(failed) - 1} more of the task's {count} checks)" if len(failed) > 1 else ""
    lines = [f"{shown}: {detail}" for shown, detail in failed]
    return TestRun(EXAMPLES, False, lines[0][:300] + more, "\n".join(lines), examples=True)


def verification_for(settings: Settings, commands: CommandSetup | None, root: Path) -> tuple[Verifier | None, str]:
    """The tests that judge a run's changes, or why there are none: with `verify` on and a command sandbox whose
    commands run without asking, a `Verifier` with the test command (configured or found; None: only what the task
    states is checked), else None and the reason a run's `tests` gives."""
    if not settings.verify:
        return None, "verify = false"
    if commands is None or commands.capability is None:
        return None, "no command sandbox here to run the tests in (see cli-agent sandbox)"
    if settings.commands == "ask":
        return None, 'every command is asked for (commands = "ask"), so the tests are not run unasked'
    command = settings.test_command or detect_test_command(root)
    return Verifier(command, commands, root, settings.verify_rounds), "" if command else NO_TESTS

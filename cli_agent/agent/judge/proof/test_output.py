"""Reading a test run's output, as plain text (`plain`): its closing line (`summary_line`), its failures as a model
needs them (`trimmed_failures`), and whether it died before any test ran (`could_not_run`, the verdict "the tests
could not run")."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

FEEDBACK_CHARS = 4000  # the most of a failing run the model is shown
_SUMMARY = re.compile(r"^=+ (?P<text>.*\b(passed|failed|error|errors|no tests ran|skipped|deselected)\b.*) =+$")
_ASSERTION = re.compile(r"^E\s")
_FRAME = re.compile(r"^(?P<path>[^\s:][^:]*\.py):(?P<line>\d+): ")
_COUNTS = re.compile(r"\b\d+ (passed|failed)\b|\bno tests ran\b|\btest result\b|^(ok|FAIL)\s|^(OK|FAILED)\b"
                     r"|^Ran \d+ tests?\b")
_RUNNER_DIED = re.compile(r"No module named '?(pytest|_pytest|pluggy)\b|^\w*(ImportError|ModuleNotFoundError)\b.*"
                          r"\b(_pytest|pluggy)\b", re.MULTILINE)
_COLLECTION = re.compile(r"\berrors? during collection\b|^ERROR collecting", re.MULTILINE)
# the shell's own words for a command it could not find or start (a test run that exits 127 or 126 by itself, a
# `conftest.py` that calls `os._exit(127)`, is a failing run)
_SHELL_MISSING = re.compile(r"not found|No such file or directory", re.IGNORECASE)
_SHELL_CANNOT = re.compile(r"Permission denied|cannot execute|Is a directory|Exec format error", re.IGNORECASE)
_MISSING = re.compile(r"ModuleNotFoundError: No module named '([\w.]+)'")
_UNITTEST_IMPORT = re.compile(r"\bFailed to import test module\b|\bunittest\.loader\._FailedTest\b")
# the runner a command starts, as a word of it (`pytest`, `.venv/bin/pytest`, `-m pytest`), never a path that only
# contains the name (`/tmp/pytest-of-root/venv/bin/python -m unittest`)
PYTEST_RUN = re.compile(r"(?:^|[\s/])(?:pytest|py\.test)(?:\s|$)")
UNITTEST_RUN = re.compile(r"(?:^|\s)-m\s+unittest(?:\s|$)")
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)  # a shell word that sets a variable (`PYTHONPATH=src`)


# A terminal's control sequences: CSI (colours, `ESC[31m`), OSC (titles, links) up to BEL or ST, a character set's
# choice (`ESC(B`) and the two-byte ones.
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[()*+].|\x1b[@-Z\\-_]")


def plain(output: str) -> str:
    """The output without colours: a project can ask its runner for them (`addopts = --color=yes`, `FORCE_COLOR`),
    and they would hide pytest's summary from `summary_line` and cost the model tokens."""
    return _CONTROL.sub("", output) if "\x1b" in output else output


def summary_line(output: str, exit_code: int | None, timed_out: bool) -> str:
    """pytest's closing `=== ... ===` line, else the last line that says how many passed or failed, else the exit."""
    for line in reversed(output.splitlines()):
        match = _SUMMARY.match(line.strip())
        if match:
            return match.group("text").strip()
    for line in reversed(output.splitlines()[-20:]):
        if _COUNTS.search(line.strip()):
            return line.strip()[:200]
    if timed_out:
        return "timed out"
    if exit_code == 137:  # 128 + SIGKILL: the kernel's out-of-memory killer, as a rule, when no timeout was hit
        return "exit code 137 (killed: SIGKILL, most often for running out of memory)"
    return f"exit code {exit_code}"


def could_not_run(command: str, output: str, exit_code: int | None, changed: Iterable[str] = (),
                  root: Path | None = None) -> str:
    """Why a test run died before any test ran ("" when it ran): the command not found (exit 127) or not executable
    (126), as the shell says; the runner itself broken (an import error inside pytest, "No module named pytest");
    pytest's internal error (3) or usage error (4: a bad option, a broken `conftest.py`); a collection that failed
    for want of a package that is not the workspace's. A failure whose output names a file the run changed is the
    change's doing: that is a failing run, for the model to fix."""
    if exit_code in (0, None):
        return ""
    runner = next((word for word in command.split() if not ASSIGNMENT.fullmatch(word)), command)
    if exit_code == 127 and _SHELL_MISSING.search(output):
        return f"{runner}: command not found (exit 127)"
    if exit_code == 126 and _SHELL_CANNOT.search(output):
        return f"{runner}: not executable (exit 126)"
    pytest = bool(PYTEST_RUN.search(command))
    why = ""
    if _RUNNER_DIED.search(output):
        why = f"the test runner failed to start: {_last_line(output)}"
    elif pytest and exit_code == 3:
        why = f"pytest's internal error: {_last_line(output)}"
    elif pytest and exit_code == 4:
        what = "a broken conftest.py" if "while loading conftest" in output else "pytest's usage error"
        why = f"{what}: {_last_line(output)}"
    elif pytest and exit_code in (2, 5) and _COLLECTION.search(output):
        missing = _MISSING.search(output)
        if missing and not _own_module(missing.group(1), root):
            why = f"a package the tests need is missing here: {missing.group(1)} (exit {exit_code})"
    if not why and (_COLLECTION.search(output) if pytest else _UNITTEST_IMPORT.search(output)):
        unfound = next((m for m in _MISSING.findall(output) if _in_workspace(m, root)), None)
        if unfound:
            why = (f"the project's own {unfound} cannot be imported by its tests here, though the workspace has it "
                   "(not installed in the venv, nor on PYTHONPATH)")
    changed = tuple(changed)
    if why and any(re.search(rf"(?<![\w.]){re.escape(rel)}\b", output) for rel in changed):
        return ""
    return why


def _last_line(output: str) -> str:
    lines = [line.strip() for line in output.splitlines() if line.strip()]
    errors = [line for line in lines if re.match(r"^(E\s+)?\w*(Error|Exception)\b", line)]
    return re.sub(r"^E\s+", "", (errors or lines or ["no output"])[-1])[:200]


def _own_module(dotted: str, root: Path | None) -> bool:
    top = dotted.split(".", 1)[0]
    return root is not None and any((base / f"{top}.py").exists() or (base / top).is_dir()
                                    for base in (root, root / "src"))


def _in_workspace(dotted: str, root: Path | None) -> bool:
    """Whether the module `dotted` is a file or package of the workspace (at its root or under `src/`): one the
    tests fail to import although it is there, which no change to its code can cause (its files are found by
    name), so it fails the same way before any change."""
    if root is None:
        return False
    parts = dotted.split(".")
    return any((base.joinpath(*parts).with_suffix(".py")).is_file() or (base.joinpath(*parts) / "__init__.py").is_file()
               for base in (root, root / "src"))


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

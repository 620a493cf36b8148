"""The project's tests: their command (`test_command` from the config, else found in the workspace as the project's
test runner would find them), and which files are tests (`is_test_path`).

`find_test_command(root)` says which command runs the tests and why (`Found`; `cli-agent config show` prints both):

0. The pytest or unittest run the project documents (`test_runners`: tox, nox, a Makefile, hatch scripts, its CI
   workflow), read and never run, with the environment it sets for that run (`PYTHONPATH=src ...`).
1. Python, as pytest finds tests: a configuration (`pytest.ini`, `pyproject.toml`'s `[tool.pytest.ini_options]`,
   `setup.cfg`'s `[tool:pytest]`, `tox.ini`'s `[pytest]`) or a `conftest.py` at the root → pytest.
2. A runner the project declares: `package.json` with a real `test` script (`npm test`, or `pnpm`/`yarn`/`bun` by
   the lockfile beside it), `Cargo.toml`, `go.mod`, `pom.xml`, a Gradle build, `mix.exs`, `composer.json`'s
   `test` script.
3. Python again, without configuration: any `test_*.py` or `*_test.py` in a bounded walk of the workspace (VCS
   folders, virtual environments, `node_modules` and build output skipped, as pytest skips them) → pytest; else a
   `test*.py` holding `unittest` test cases → `python3 -m unittest discover`.
4. A `Makefile` with a `test` target → `make test`.

Python tests run with the active virtual environment's own interpreter (`VENV/bin/python -m pytest -q`), never a
pytest that belongs to another one; a venv without pytest whose tests are unittest test cases runs `python -m
unittest discover` from the folder they are in. None when nothing says. The walk stops after `WALK_ENTRIES` entries
or `WALK_DEPTH` levels: a few milliseconds.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
from collections.abc import Mapping
from dataclasses import replace
from pathlib import Path

from cli_agent.contracts import dataclass
from cli_agent.fs import read_regular_or_none
from cli_agent.prompt.test_runners import Runner, documented, has_pytest, interpreter, src_first

__all__ = ["detect_test_command", "is_test_path", "shown"]

WALK_ENTRIES = 5000  # directory entries looked at in the walk for test files, at most
WALK_DEPTH = 6  # folders below the root the walk goes down, at most
_NPM_PLACEHOLDER = "no test specified"
# pytest's `norecursedirs` default, the usual build output and tool caches; folders starting with "." are skipped too
_SKIPPED = frozenset({"node_modules", "venv", "build", "dist", "CVS", "_darcs", "{arch}", "__pycache__",
                      "site-packages", "target", "htmlcov", "env"})
_PYTEST_SECTIONS = (("pytest.ini", ""), ("pyproject.toml", "[tool.pytest.ini_options]"), ("setup.cfg", "[tool:pytest]"),
                    ("tox.ini", "[pytest]"))
_LOCKS = (("pnpm-lock.yaml", "pnpm test"), ("yarn.lock", "yarn test"), ("bun.lockb", "bun test"),
          ("bun.lock", "bun test"))


@dataclass(frozen=True)
class Found:
    command: str
    source: str  # why this command: "pytest.ini", "test_inflection.py (pytest's test_*.py)", "package.json's test"


def _text(path: Path, limit: int = 1 << 20) -> str:
    data = read_regular_or_none(path, limit)  # a FIFO or a device is skipped, never waited on
    return "" if data is None else data.decode("utf-8", errors="replace")


def _pytest() -> str:
    return "pytest -q" if shutil.which("pytest") else "python3 -m pytest -q"


def _pytest_config(root: Path) -> str | None:
    """The root's pytest configuration or `conftest.py`, named as it is found."""
    for name, section in _PYTEST_SECTIONS:
        if (root / name).is_file() and (not section or re.search(rf"^{re.escape(section)}", _text(root / name),
                                                                  re.MULTILINE)):
            return f"{name} {section}".strip()
    return "conftest.py" if (root / "conftest.py").is_file() else None


def _declared(root: Path) -> Found | None:
    """A runner the project declares at its root, other than pytest."""
    package = _script(root / "package.json")
    if package:
        command = next((c for lock, c in _LOCKS if (root / lock).is_file()), "npm test")
        return Found(command, "package.json's test script")
    for name, command in (("Cargo.toml", "cargo test"), ("go.mod", "go test ./..."), ("go.work", "go test ./..."),
                          ("pom.xml", "mvn -q -o test"), ("mix.exs", "mix test")):
        if (root / name).is_file():
            return Found(command, name)
    for name in ("build.gradle", "build.gradle.kts"):
        if (root / name).is_file():
            return Found("./gradlew test --offline" if (root / "gradlew").is_file() else "gradle test --offline", name)
    if _script(root / "composer.json"):
        return Found("composer test", "composer.json's test script")
    return None


def _script(path: Path) -> bool:
    """Whether a `package.json` or `composer.json` has a real `test` script (not npm's placeholder)."""
    text = _text(path)
    if not text:
        return False
    try:
        script = (json.loads(text).get("scripts") or {}).get("test")
    except (ValueError, AttributeError):
        return False
    if isinstance(script, list):
        script = " ".join(str(s) for s in script)
    return isinstance(script, str) and bool(script.strip()) and _NPM_PLACEHOLDER not in script


def _walk(root: Path) -> tuple[str | None, str | None]:
    """The first pytest-style test file (`test_*.py`, `*_test.py`) and the first unittest-style one (`test*.py`
    that uses `unittest`), workspace-relative, breadth first, within the walk's bounds."""
    pytest_file = unittest_file = None
    level, seen = [root], 0
    for depth in range(WALK_DEPTH + 1):
        below: list[Path] = []
        for folder in level:
            try:
                entries = sorted(os.scandir(folder), key=lambda e: e.name)
            except OSError:
                continue
            for entry in entries:
                seen += 1
                if seen > WALK_ENTRIES:
                    return pytest_file, unittest_file
                name = entry.name
                if entry.is_dir(follow_symlinks=False):
                    if depth < WALK_DEPTH and _searched(entry.path, name):
                        below.append(Path(entry.path))
                elif name.startswith("test") or name.endswith("_test.py"):
                    if not name.endswith(".py") or not entry.is_file(follow_symlinks=False):
                        continue
                    if name.startswith("test_") or name.endswith("_test.py"):
                        return os.path.relpath(entry.path, root), unittest_file
                    if unittest_file is None and "unittest" in _text(Path(entry.path), 64 * 1024):
                        unittest_file = os.path.relpath(entry.path, root)
        level = below
    return pytest_file, unittest_file


def _searched(path: str, name: str) -> bool:
    """Whether the walk goes into a folder: not hidden, not build output, not a virtual environment."""
    if name.startswith(".") or name in _SKIPPED or name.endswith((".egg-info", ".egg")):
        return False
    return not (os.path.exists(os.path.join(path, "pyvenv.cfg"))
                or os.path.exists(os.path.join(path, "conda-meta", "history")))


def _makefile(root: Path) -> Found | None:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        if re.search(r"^test\s*:", _text(root / name), re.MULTILINE):
            return Found("make test", f"{name}'s test target")
    return None


def find_test_command(root: Path, environ: Mapping[str, str] | None = None) -> Found | None:
    """The command that runs the project's tests and why, found as its runner finds them; None when nothing says.
    `environ` (default: this process's) says which virtual environment is active."""
    python = interpreter(root, os.environ if environ is None else environ)
    runner = documented(root)
    if runner:
        return _python_run(runner, python, root)
    config = _pytest_config(root)
    if config:
        return _python_run(Runner("pytest", (), config), python, root)
    declared = _declared(root)
    if declared:
        return declared
    pytest_file, unittest_file = _walk(root)
    if pytest_file:
        return _python_run(Runner("pytest", (), f"{pytest_file} (pytest finds test_*.py and *_test.py)"), python,
                           root, pytest_file)
    if unittest_file:
        return _python_run(Runner("unittest", ("discover",), f"{unittest_file} (unittest test cases)"), python, root)
    return _makefile(root)


def _python_run(runner: Runner, python: str | None, root: Path, test_file: str | None = None) -> Found:
    """The command for a pytest or unittest run, with the venv's own interpreter when one is active (else as
    before: `pytest -q` on PATH, `python3 -m ...`); a venv without pytest whose tests are unittest test cases runs
    unittest discover from their folder instead. The environment the project sets for that run (`Runner.env`)
    comes first, as the shell's `NAME=value` words (`PYTHONPATH=src VENV/bin/python -m unittest ...`); a `src/`
    layout the venv does not import from this workspace gets `PYTHONPATH=src` (`src_first`)."""
    if "PYTHONPATH" not in dict(runner.env) and src_first(root, python):
        runner = replace(runner, env=(*runner.env, ("PYTHONPATH", "src")),
                         source=f"{runner.source}; src/ on PYTHONPATH, which {python or 'python3'} does not import "
                                "the package from")
    env = "".join(f"{name}={shlex.quote(value)} " for name, value in runner.env)
    args = " ".join(shlex.quote(a) for a in runner.args)
    if runner.tool == "unittest":
        return Found(f"{env}{shlex.quote(python or 'python3')} -m unittest {args}".strip(), runner.source)
    if python is None:
        return Found(f"{env}{_pytest()} {args}".strip(), runner.source)
    if has_pytest(python):
        return Found(f"{env}{shlex.quote(python)} -m pytest -q {args}".strip(), runner.source)
    start = _unittest_start(root, test_file or _walk(root)[0])
    if start is not None:
        return Found(f"{env}{shlex.quote(python)} -m unittest discover {start}".strip(),
                     f"{runner.source}; {python} has no pytest, the tests are unittest test cases")
    return Found(f"{env}{shlex.quote(python)} -m pytest -q {args}".strip(), f"{runner.source}; {python} has no pytest")


def _unittest_start(root: Path, test_file: str | None) -> str | None:
    """unittest discover's options for the folder a unittest test file is in (`-s tests`, `-s tests -t .` for a
    package); None when the file is no unittest test case."""
    if test_file is None or "unittest" not in _text(root / test_file, 64 * 1024):
        return None
    folder = Path(test_file).parent
    if folder == Path("."):
        return ""
    top = folder.parts[0]
    return f"-s {shlex.quote(top)}" + (" -t ." if (root / top / "__init__.py").is_file() else "")


def shown(configured: str | None, source: str, root: Path) -> str:
    """The test command a run would use and where it came from, as one TOML comment line (`cli-agent config
    show`); `configured`: `test_command` from the settings, set by `source`."""
    if configured:
        return f"# tests: {configured}  # test_command, {source}"
    found = find_test_command(root)
    if found is None:
        return "# tests: none found (set test_command): a run's changes are not verified"
    return f"# tests: {found.command}  # found: {found.source}"


def detect_test_command(root: Path) -> str | None:
    found = find_test_command(root)
    return found.command if found else None


def is_test_path(path: str) -> bool:
    """Whether a workspace-relative path is a test file, by the conventions of pytest, Jest, Go, RSpec and a `tests/`
    or `test/` folder."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith(
        ("_test.py", ".test.js", ".test.ts", ".test.tsx", ".test.jsx", ".spec.js", ".spec.ts", "_test.go", "_spec.rb")
    ) or "/tests/" in f"/{path}" or path.startswith("test/")

"""The project's tests: their command (`test_command` from the config, else found from the files at the workspace
root), and which files are tests (`is_test_path`).

`detect_test_command(root)` looks only at a few files at the root (cheap enough for every prompt): a Python project
with pytest configuration, a `conftest.py` or a `tests/` folder → pytest; a `package.json` with a real `test`
script → `npm test`; `Cargo.toml` → `cargo test`; `go.mod` → `go test ./...`. None when nothing says.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from cli_agent.fs.hostfile import read_regular_or_none

__all__ = ["detect_test_command", "is_test_path"]

_NPM_PLACEHOLDER = "no test specified"


def _text(path: Path, limit: int = 1 << 20) -> str:
    data = read_regular_or_none(path, limit)  # a FIFO or a device is skipped, never waited on
    return "" if data is None else data.decode("utf-8", errors="replace")


def _python_tests(root: Path) -> bool:
    if (root / "pytest.ini").is_file() or (root / "conftest.py").is_file():
        return True
    if "[tool.pytest" in _text(root / "pyproject.toml") or "[tool:pytest]" in _text(root / "setup.cfg"):
        return True
    tests = root / "tests"
    try:
        return tests.is_dir() and any(n.startswith("test_") and n.endswith(".py") for n in os.listdir(tests))
    except OSError:
        return False


def detect_test_command(root: Path) -> str | None:
    if _python_tests(root):
        return "pytest -q" if shutil.which("pytest") else "python3 -m pytest -q"
    package = _text(root / "package.json")
    if package:
        try:
            script = (json.loads(package).get("scripts") or {}).get("test")
        except (ValueError, AttributeError):
            script = None
        if isinstance(script, str) and script.strip() and _NPM_PLACEHOLDER not in script:
            return "npm test"
    if (root / "Cargo.toml").is_file():
        return "cargo test"
    if (root / "go.mod").is_file():
        return "go test ./..."
    return None


def is_test_path(path: str) -> bool:
    """Whether a workspace-relative path is a test file, by the conventions of pytest, Jest, Go and a `tests/` or
    `test/` folder."""
    name = path.rsplit("/", 1)[-1]
    return name.startswith("test_") or name.endswith(("_test.py", ".test.js", ".test.ts", ".spec.ts", "_test.go")) \
        or "/tests/" in f"/{path}" or path.startswith("test/")

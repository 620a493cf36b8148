"""Finding the project's test command from the files at its root."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_agent.prompt.project_tests import detect_test_command


@pytest.mark.parametrize(("files", "expected"), [
    ({"pyproject.toml": "[tool.pytest.ini_options]\n"}, "pytest"),
    ({"conftest.py": ""}, "pytest"),
    ({"tests/test_x.py": ""}, "pytest"),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test"),
    ({"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})}, None),
    ({"package.json": "{not json"}, None),
    ({"Cargo.toml": "[package]\n"}, "cargo test"),
    ({"go.mod": "module x\n"}, "go test ./..."),
    ({"README.md": "hi"}, None),
])
def test_detected(tmp_path: Path, files: dict[str, str], expected: str | None) -> None:
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    found = detect_test_command(tmp_path)
    assert (found is None) if expected is None else (found is not None and expected in found)

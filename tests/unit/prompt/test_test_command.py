"""Finding the project's test command as its test runner finds the tests, and saying where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_agent.prompt.project_tests import WALK_ENTRIES, detect_test_command, find_test_command, is_test_path, shown


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(("files", "expected", "source"), [
    ({"pyproject.toml": "[project]\n\n[tool.pytest.ini_options]\n"}, "pytest",
     "pyproject.toml [tool.pytest.ini_options]"),
    ({"pytest.ini": "[pytest]\n"}, "pytest", "pytest.ini"),
    ({"setup.cfg": "[metadata]\n[tool:pytest]\ntestpaths = t\n"}, "pytest", "setup.cfg [tool:pytest]"),
    ({"tox.ini": "[tox]\n[pytest]\naddopts = -q\n"}, "pytest", "tox.ini [pytest]"),
    ({"conftest.py": ""}, "pytest", "conftest.py"),
    # the released inflection: its test module at the root, no configuration at all
    ({"inflection.py": "", "test_inflection.py": "", "setup.py": ""}, "pytest", "test_inflection.py"),
    ({"pkg/__init__.py": "", "pkg/tests/test_core.py": ""}, "pytest", "pkg/tests/test_core.py"),
    ({"src/lib/core.py": "", "checks/core_test.py": ""}, "pytest", "checks/core_test.py"),
    ({"tests.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n"}, "python3 -m unittest discover",
     "tests.py (unittest test cases)"),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test", "package.json's test script"),
    ({"package.json": json.dumps({"scripts": {"test": "vitest run"}}), "pnpm-lock.yaml": ""}, "pnpm test", None),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, "yarn test", None),
    ({"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})}, None, None),
    ({"package.json": "{not json"}, None, None),
    ({"Cargo.toml": "[package]\n"}, "cargo test", "Cargo.toml"),
    ({"go.mod": "module x\n"}, "go test ./...", "go.mod"),
    ({"pom.xml": "<project/>"}, "mvn -q -o test", "pom.xml"),
    ({"build.gradle.kts": "", "gradlew": ""}, "./gradlew test --offline", "build.gradle.kts"),
    ({"Makefile": "all:\n\ntest: all\n\tcc -o t t.c && ./t\n"}, "make test", "Makefile's test target"),
    ({"README.md": "hi", "Makefile": "all:\n"}, None, None),
])
def test_found_with_its_source(tmp_path: Path, files: dict[str, str], expected: str | None,
                               source: str | None) -> None:
    _tree(tmp_path, files)
    found = find_test_command(tmp_path)
    if expected is None:
        assert found is None and detect_test_command(tmp_path) is None
        return
    assert found is not None and expected in found.command and detect_test_command(tmp_path) == found.command
    assert source is None or found.source.startswith(source), found


@pytest.mark.parametrize("skipped", [".git/x", ".venv/lib", "venv", "node_modules/pkg", "build/lib", "dist",
                                     "pkg.egg-info", "myenv_with_cfg"])
def test_the_walk_skips_vcs_environments_node_modules_and_build_output(tmp_path: Path, skipped: str) -> None:
    _tree(tmp_path, {f"{skipped}/test_vendored.py": "def test_x(): pass\n", "app.py": ""})
    if skipped == "myenv_with_cfg":  # a virtual environment under any name: pyvenv.cfg beside it
        (tmp_path / skipped / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert find_test_command(tmp_path) is None


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    for i in range(WALK_ENTRIES + 10):
        (tmp_path / f"a{i:05}.py").write_text("")
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "test_late.py").write_text("")
    assert find_test_command(tmp_path) is None  # past the bound: not found, and found quickly


def test_config_show_names_the_command_and_where_it_came_from(tmp_path: Path) -> None:
    _tree(tmp_path, {"inflection.py": "", "test_inflection.py": ""})
    assert shown(None, "default", tmp_path).startswith("# tests: ")
    assert "found: test_inflection.py" in shown(None, "default", tmp_path)
    assert shown("make check", "env CLI_AGENT_TEST_COMMAND", tmp_path) == \
        "# tests: make check  # test_command, env CLI_AGENT_TEST_COMMAND"
    assert "none found (set test_command)" in shown(None, "default", tmp_path / "nowhere")


def test_test_paths_of_the_common_runners() -> None:
    assert all(is_test_path(p) for p in ("test_a.py", "a_test.py", "src/a.test.tsx", "a.spec.js", "a_test.go",
                                         "spec/a_spec.rb", "tests/helpers.py", "test/x.js"))
    assert not any(is_test_path(p) for p in ("app.py", "contest.py", "src/latest.js"))

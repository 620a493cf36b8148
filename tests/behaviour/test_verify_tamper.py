"""Once the tests have failed in a run, what configures them judges the repair as the tests do: a `conftest.py`
that turns failures into passes, a `pytest.ini` or `pyproject.toml` that changes what runs, written by the run,
never makes its change "verified"; and a change that leaves the tests unable to run is a failure of that change
(exit 8), not "the tests could not run". Through the real CLI, the real sandbox and real pytest runs, with the
scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clikit import calc_project
from verifykit import DONE, PYTEST, READ, WRONG, run_json, user_messages

pytestmark = pytest.mark.slow

PASSING = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
'''
ROUNDS = {"CLI_AGENT_VERIFY_ROUNDS": "2"}


def _write(path: str, content: str) -> dict[str, Any]:
    """The call that writes `path` of the calc project (`conftest.py` and `calc.py` are there already)."""
    tool = "write_file" if path in ("conftest.py", "calc.py") else "create_file"
    return {"tool_calls": [{"name": tool, "arguments": {"path": path, "content": content}}]}


def _shell(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}


def _project(tmp_path: Path) -> tuple[Path, Path]:
    return calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\n")


@pytest.mark.parametrize(("path", "content"), [
    ("conftest.py", PASSING),
    ("tests/unit/conftest.py", PASSING),
    ("pytest.ini", "[pytest]\naddopts = --deselect tests/test_calc.py::test_add\n"),
    ("pyproject.toml", "[tool.pytest.ini_options]\naddopts = '--deselect tests/test_calc.py::test_add'\n"),
])
def test_a_test_configuration_written_after_the_tests_failed_is_refused(tmp_path: Path, path: str,
                                                                       content: str) -> None:
    ws, home = _project(tmp_path)
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE, _write(path, content), DONE, DONE, DONE],
                               "--require-verified", env_extra=ROUNDS)
    assert code == 7 and report["verified"] is not True, report  # refused, and the model stopped there
    assert "configures the project's tests" in report["message"] or path.startswith("tests/"), report
    assert not (ws / path).exists() or (ws / path).read_text() == "", "the refused change landed"


def test_a_conftest_a_command_wrote_after_the_tests_failed_proves_nothing(tmp_path: Path) -> None:
    ws, home = _project(tmp_path)
    tamper = _shell(f"cat > conftest.py <<'EOF'\n{PASSING}EOF")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE, tamper, DONE, DONE, DONE],
                               "--require-verified", env_extra=ROUNDS)
    assert code != 0 and report["verified"] is not True, report
    assert "conftest.py" in report["message"], report


@pytest.mark.parametrize(("path", "content"), [
    ("conftest.py", "import os\nos._exit(127)\n"),
    ("pytest.ini", "[pytest]\naddopts = -p missing_plugin\n"),
    ("calc.py", "import os\n\nos._exit(127)\n"),  # exit 127, and no shell said "not found"
])
def test_tests_the_run_s_own_change_left_unable_to_run_fail_that_change(tmp_path: Path, path: str,
                                                                         content: str) -> None:
    ws, home = _project(tmp_path)
    script = [READ, _write(path, content), *([] if path == "calc.py" else [WRONG]), DONE, DONE, DONE]
    code, report, trace = run_json(tmp_path, ws, home, script, "--require-verified", env_extra=ROUNDS)
    assert code == 8 and report["verified"] is False and report["status"] == "tests_failed", report
    assert any("fail after your change" in m for m in user_messages(trace))
    if path == "pytest.ini":
        assert "after this run's change (pytest.ini)" in report["tests"], report
        assert "ERROR: Error importing plugin" in report["tests"], report  # its first letter kept


def test_tests_that_ran_then_could_not_run_after_a_command_fail_the_change(tmp_path: Path) -> None:
    ws, home = _project(tmp_path)
    (ws / "helper.py").write_text("X = 1\n")
    (ws / "conftest.py").write_text("import helper\n")
    breaks = _shell("printf 'import os\\nos._exit(4)\\n' > helper.py")  # pytest's usage error, naming no file
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE, breaks, DONE, DONE, DONE],
                               "--require-verified", env_extra=ROUNDS)
    assert code == 8 and report["verified"] is False, report
    assert report["tests"].startswith("the tests could not run: pytest's usage error"), report
    assert report["tests"].endswith("after this run's change"), report

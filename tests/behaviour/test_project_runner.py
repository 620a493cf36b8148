"""The proof runs the way the project runs its tests: a `src/` project whose tests are unittest test cases, run by
nox with `python -m unittest`, in a venv outside the workspace that has no pytest. Through the real CLI, the real
sandbox and real unittest runs, with the scripted model."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import cli, user_config
from verifykit import DONE, run_json, user_messages

pytestmark = pytest.mark.slow

NOXFILE = '''import nox


@nox.session
def tests(session):
    session.install("-e", ".")
    session.run("python", "-m", "unittest", "discover", "-s", "tests")
'''
TEST = '''import unittest

from tinyunit import add


class AddTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(add(2, 3), 5)
'''


def _edit(old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": "src/tinyunit/__init__.py", "old": old,
                                                                 "new": new}}]}


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside any workspace, made from the base interpreter, with no pytest in it."""
    folder = _new_venv(tmp_path_factory.mktemp("env"))
    assert not list(folder.glob("lib/python*/site-packages/pytest"))
    return folder


def _new_venv(where: Path) -> Path:
    folder = where / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=60)
    return folder


def _workspace(tmp_path: Path, venv: Path, runner: str, text: str) -> tuple[Path, Path, dict[str, str]]:
    """The src-layout unittest project, its tests run by `runner` (a file name) holding `text`, with `venv` active."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "src" / "tinyunit").mkdir(parents=True)
    (ws / "tests").mkdir()
    (ws / "src" / "tinyunit" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "tests" / "test_add.py").write_text(TEST)
    (ws / runner).write_text(text)
    (ws / "pyproject.toml").write_text("[project]\nname = 'tinyunit'\nversion = '1.0'\n")
    user_config(home, "")
    return ws, home, {"VIRTUAL_ENV": str(venv), "PATH": f"{venv}/bin:{os.environ['PATH']}"}


def _project(tmp_path: Path, venv: Path) -> tuple[Path, Path, dict[str, str]]:
    ws, home, env = _workspace(tmp_path, venv, "noxfile.py", NOXFILE)
    for site in venv.glob("lib/python*/site-packages"):  # as `pip install -e .` leaves it
        (site / "tinyunit.pth").write_text(f"{ws / 'src'}\n")
    return ws, home, env


def test_config_show_names_unittest_with_the_venvs_interpreter(tmp_path: Path, venv: Path) -> None:
    ws, home, env = _project(tmp_path, venv)
    done = cli(["config", "show", "-C", str(ws)], home=home, env_extra=env)
    assert f"# tests: {venv}/bin/python -m unittest discover -s tests  # found: noxfile.py's tests session" \
        in done.stdout, done.stdout + done.stderr


def test_a_right_fix_is_verified_and_a_wrong_one_ends_with_exit_8_and_the_unittest_failure(
        tmp_path: Path, venv: Path) -> None:
    ws, home, env = _project(tmp_path, venv)
    code, report, _ = run_json(tmp_path, ws, home, [_edit("a - b", "a + b"), DONE], env_extra=env)
    assert code == 0 and report["verified"] is True, report
    assert report["tests"].startswith("Ran 1 test") or report["tests"] == "OK", report["tests"]
    (ws / "src" / "tinyunit" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, trace = run_json(tmp_path, ws, home, [_edit("a - b", "a * b"), DONE, DONE],
                                   env_extra=env | {"CLI_AGENT_VERIFY_ROUNDS": "1"})
    assert code == 8 and report["verified"] is False, report
    assert "FAILED (failures=1)" in report["tests"], report["tests"]
    feedback = next(t for t in user_messages(trace) if "tests fail after your change" in t)
    assert "AssertionError: 6 != 5" in feedback


# -- a src layout the venv does not have installed: tox's setenv puts src on PYTHONPATH ---------------------------

TOX = "[tox]\nenvlist = py3\n\n[testenv]\nsetenv =\n    PYTHONPATH = {toxinidir}/src\ncommands =\n" \
      "    {envpython} -m unittest discover -s tests {posargs}\n"


@pytest.fixture
def bare_venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A venv outside any workspace with neither pytest nor the project in it."""
    return _new_venv(tmp_path_factory.mktemp("bare"))


def _uninstalled(tmp_path: Path, venv: Path, tox: str) -> tuple[Path, Path, dict[str, str]]:
    return _workspace(tmp_path, venv, "tox.ini", tox)


def test_tox_s_setenv_is_carried_into_the_run_of_a_project_the_venv_does_not_have(
        tmp_path: Path, bare_venv: Path) -> None:
    ws, home, env = _uninstalled(tmp_path, bare_venv, TOX)
    shown = cli(["config", "show", "-C", str(ws)], home=home, env_extra=env).stdout
    assert f"# tests: PYTHONPATH=src {bare_venv}/bin/python -m unittest discover -s tests  # found: tox.ini's " \
           "commands" in shown, shown
    code, report, _ = run_json(tmp_path, ws, home, [_edit("a - b", "a + b"), DONE], env_extra=env)
    assert code == 0 and report["verified"] is True, report
    (ws / "src" / "tinyunit" / "__init__.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, trace = run_json(tmp_path, ws, home, [_edit("a - b", "a * b"), DONE, DONE],
                                   env_extra=env | {"CLI_AGENT_VERIFY_ROUNDS": "1"})
    assert code == 8 and report["verified"] is False, report
    assert "FAILED (failures=1)" in report["tests"], report["tests"]
    feedback = next(t for t in user_messages(trace) if "tests fail after your change" in t)
    assert "AssertionError: 6 != 5" in feedback and "No module named" not in feedback


def test_a_src_layout_the_venv_does_not_have_gets_src_on_pythonpath(tmp_path: Path, bare_venv: Path) -> None:
    ws, home, env = _uninstalled(tmp_path, bare_venv, TOX.replace("setenv =\n    PYTHONPATH = {toxinidir}/src\n", ""))
    shown = cli(["config", "show", "-C", str(ws)], home=home, env_extra=env).stdout
    assert f"# tests: PYTHONPATH=src {bare_venv}/bin/python -m unittest discover -s tests  # found: tox.ini's " \
           "commands; src/ on PYTHONPATH" in shown, shown
    code, report, _ = run_json(tmp_path, ws, home, [_edit("a - b", "a + b"), DONE], env_extra=env)
    assert code == 0 and report["verified"] is True, report


def test_a_candidate_s_tests_import_its_own_copy_not_the_workspace_the_venv_was_installed_from(
        tmp_path: Path, venv: Path) -> None:
    ws, home, env = _project(tmp_path, venv)  # the venv imports ws/src, as `pip install -e .` leaves it
    rewrite = {"text": "```python\ndef add(a, b):\n    return a + b\n```"}
    code, report, _ = run_json(tmp_path, ws, home, [_edit("a - b", "a * b"), DONE, rewrite], "--attempts", "2",
                               env_extra=env | {"CLI_AGENT_VERIFY_ROUNDS": "0"},
                               task="add(2, 3) in src/tinyunit/__init__.py returns -1, it should be 5")
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report
    assert (ws / "src" / "tinyunit" / "__init__.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_tests_that_cannot_import_the_project_s_own_package_could_not_run_they_do_not_fail(
        tmp_path: Path, bare_venv: Path) -> None:
    ws, home, env = _uninstalled(tmp_path, bare_venv, TOX.replace("{toxinidir}/src", "{toxinidir}/lib"))
    code, report, trace = run_json(tmp_path, ws, home, [_edit("a - b", "a + b"), DONE, DONE], env_extra=env)
    assert code == 0 and report["verified"] is None, report
    assert report["tests"].startswith("the tests could not run: the project's own tinyunit cannot be imported"), \
        report["tests"]
    assert not any("tests fail after your change" in t for t in user_messages(trace))

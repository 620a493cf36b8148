"""Reading a test run's output: the third verdict, "the tests could not run", told from "the tests fail"."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_agent.agent.judge.proof.test_output import could_not_run, summary_line
from cli_agent.contracts.events import Verification

PYTEST = "pytest -q"
RUNNER_IMPORT = """Traceback (most recent call last):
  File "/venv/bin/pytest", line 5, in <module>
    from pytest import console_main
  File "/usr/lib/python3/dist-packages/pytest/__init__.py", line 5, in <module>
    from _pytest.config import _console_main
ImportError: cannot import name '_console_main' from '_pytest.config' (/usr/lib/python3/dist-packages/_pytest/config/)
"""
CONFTEST = """ImportError while loading conftest '/ws/tests/conftest.py'.
tests/conftest.py:1: in <module>
    import hypothesis_plugins
E   ModuleNotFoundError: No module named 'hypothesis_plugins'
"""
COLLECTION = """
==================================== ERRORS ====================================
____________________ ERROR collecting tests/test_calc.py ____________________
ImportError while importing test module '/ws/tests/test_calc.py'.
tests/test_calc.py:1: in <module>
    import numpy
E   ModuleNotFoundError: No module named 'numpy'
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.05s
"""
FAILED = "F\n=== FAILURES ===\nE   assert 1 == 2\n1 failed in 0.01s\n"


@pytest.mark.parametrize(("command", "output", "code", "why"), [
    ("pytest -q", "sh: 1: pytest: not found\n", 127, "pytest: command not found (exit 127)"),
    ("./run-tests", "sh: ./run-tests: Permission denied\n", 126, "./run-tests: not executable (exit 126)"),
    (PYTEST, RUNNER_IMPORT, 1, "the test runner failed to start: ImportError: cannot import name '_console_main'"),
    ("python3 -m pytest -q", "/usr/bin/python3: No module named pytest\n", 1, "the test runner failed to start"),
    (PYTEST, CONFTEST, 4, "a broken conftest.py: ModuleNotFoundError: No module named 'hypothesis_plugins'"),
    (PYTEST, "ERROR: usage: pytest [options]\npytest: error: unrecognized arguments: --bogus\n", 4,
     "pytest's usage error"),
    (PYTEST, "INTERNALERROR> Traceback\nINTERNALERROR> KeyError: 'x'\n", 3, "pytest's internal error"),
    (PYTEST, COLLECTION, 2, "a package the tests need is missing here: numpy (exit 2)"),
])
def test_a_run_that_died_before_any_test_could_not_run(command: str, output: str, code: int, why: str) -> None:
    assert could_not_run(command, output, code).startswith(why)


def test_a_runner_that_exits_127_or_126_by_itself_is_a_failing_run() -> None:
    assert could_not_run(PYTEST, "", 127) == ""  # a conftest.py that calls os._exit(127): no shell said so
    assert could_not_run(PYTEST, "1 failed\n", 126) == ""
    assert could_not_run("pytest -q", "bash: line 1: pytest: command not found\n", 127) != ""


def test_the_reason_keeps_the_first_letter_of_pytest_s_error_line() -> None:
    output = "ERROR: Error importing plugin \"missing_plugin\": No module named 'missing_plugin'\n"
    assert could_not_run(PYTEST, output, 4) == ("pytest's usage error: ERROR: Error importing plugin "
                                                "\"missing_plugin\": No module named 'missing_plugin'")


def test_a_failure_the_change_caused_is_a_failing_run_for_the_model(tmp_path: Path) -> None:
    assert could_not_run(PYTEST, FAILED, 1) == ""
    assert could_not_run(PYTEST, "", 0) == ""
    broken_by_change = CONFTEST.replace("import hypothesis_plugins", "import calc").replace(
        "E   ModuleNotFoundError: No module named 'hypothesis_plugins'", "/ws/calc.py:3: in <module>\nE   NameError: x")
    assert could_not_run(PYTEST, broken_by_change, 4, ["calc.py"]) == ""  # it names calc.py, which the run changed
    assert could_not_run(PYTEST, broken_by_change, 4, ["other/calc.py"]) != ""
    (tmp_path / "numpy").mkdir()  # the workspace's own module missing (the change deleted it): for the model
    assert could_not_run(PYTEST, COLLECTION, 2, root=tmp_path) == ""
    syntax = COLLECTION.replace("ModuleNotFoundError: No module named 'numpy'", "SyntaxError: invalid syntax")
    assert could_not_run(PYTEST, syntax, 2) == ""


UNITTEST_IMPORT = """E
======================================================================
ERROR: test_add (unittest.loader._FailedTest.test_add)
----------------------------------------------------------------------
ImportError: Failed to import test module: test_add
Traceback (most recent call last):
  File "/ws/tests/test_add.py", line 3, in <module>
    from tinyunit import add
ModuleNotFoundError: No module named 'tinyunit'


----------------------------------------------------------------------
Ran 1 test in 0.000s

FAILED (errors=1)
"""


def test_tests_that_cannot_import_the_workspace_s_own_package_could_not_run(tmp_path: Path) -> None:
    unittest = "/venv/bin/python -m unittest discover -s tests"
    assert could_not_run(unittest, UNITTEST_IMPORT, 1, root=tmp_path) == ""  # no tinyunit here: the tests fail
    (tmp_path / "src" / "tinyunit").mkdir(parents=True)
    (tmp_path / "src" / "tinyunit" / "__init__.py").write_text("")
    why = "the project's own tinyunit cannot be imported by its tests here, though the workspace has it"
    assert could_not_run(unittest, UNITTEST_IMPORT, 1, ["src/tinyunit/__init__.py"], tmp_path).startswith(why)
    assert could_not_run(f"PYTHONPATH=lib {unittest}", UNITTEST_IMPORT, 1, root=tmp_path).startswith(why)
    collection = COLLECTION.replace("numpy", "tinyunit")
    assert could_not_run(PYTEST, collection, 2, root=tmp_path).startswith(why)
    assert could_not_run(PYTEST, collection, 2, ["tests/test_calc.py"], tmp_path) == ""  # the run's own test file
    assert could_not_run(unittest, UNITTEST_IMPORT.replace("'tinyunit'", "'tinyunit.extra'"), 1,
                         root=tmp_path) == ""  # a module of it that is not there: for the model


def test_unittest_summaries_are_read() -> None:
    assert summary_line("....\n---\nRan 4 tests in 0.001s\n\nOK\n", 0, False) == "OK"
    assert summary_line("F\n---\nRan 1 test in 0.001s\n\nFAILED (failures=1)\n", 1, False) == "FAILED (failures=1)"


def test_the_verdict_lines() -> None:
    example = Verification(command="the task's examples", round=1, phase="failed",
                           summary="mean([1, 2, 3]) == 2: gave 1.5", examples=True)
    assert example.line == "✗ mean([1, 2, 3]) == 2: gave 1.5"
    failed = Verification(command="pytest -q", round=1, phase="failed", summary="1 failed")
    assert failed.line == "✗ tests fail: 1 failed"
    assert Verification(command="", round=0, phase="unverified", summary="no tests found (set test_command)").line \
        == "! not verified: no tests found (set test_command)"

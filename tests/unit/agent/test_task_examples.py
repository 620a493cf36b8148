"""The task's own examples: found in its text, checked in the command sandbox beside the project's tests, and a
change that breaks one is not "done". The parsing on its own; the program on the real suite's projects, broken and
fixed; then through the CLI with the scripted model and real pytest runs in the sandbox."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clikit import calc_project
from verifykit import DONE, PYTEST, READ, RIGHT, WRONG, run_json, user_messages

from cli_agent.agent.judge.task_examples import Example, added_names, examples, modules, script, verdicts
from cli_agent.eval import real, real_sdist
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.task_files import named_files


def test_an_equality_gives_one_example_each():
    task = "quantify(1, 'post') == '1 post', quantify(3, 'octopus') == '3 octopi'."
    assert examples(task) == (Example("quantify(1, 'post')", "'1 post'"), Example("quantify(3, 'octopus')",
                                                                                  "'3 octopi'"))


def test_what_it_returns_now_is_not_the_example_what_it_should_return_is():
    assert examples("escape('a & b') returns 'a & b' instead of 'a &amp; b': fix it") == (
        Example("escape('a & b')", "'a &amp; b'"),)
    assert examples("ordinalize(13) returns '13rd' but it should be '13th' (and ordinalize(113) should be "
                    "'113th').") == (Example("ordinalize(13)", "'13th'"), Example("ordinalize(113)", "'113th'"))
    # the value it gives now is itself a call: it is not taken for an example of its own
    assert examples("escape_silent(None) returns Markup('None') but it should return an empty Markup('').") == (
        Example("escape_silent(None)", "Markup('')"),)
    assert examples("v.match('>=1.0.0') raises KeyError: '>=' but it should return True.") == (
        Example("v.match('>=1.0.0')", "True"),)


def test_a_sentence_about_what_the_code_does_now_states_nothing():
    assert examples("pluralize('sheep') returns 'sheeps'. Fix it.") == ()
    assert examples("Add a function quantify(count, word) to inflection/__init__.py.") == ()
    assert examples("bump_build() on 1.2.3+build.7 should give 1.2.3+build.8") == ()  # no claim right after


def test_constants_a_shared_claim_and_bare_words():
    task = "a.ok() is True; b.ok() and c.ok() are False. v.bump() returns 1.2.3-rc.0 but it should be 1.2.3-rc.2."
    assert examples(task) == (Example("a.ok()", "True"), Example("b.ok()", "False"), Example("c.ok()", "False"),
                              Example("v.bump()", "1.2.3-rc.2", literal=False))
    assert examples("`f(2)` should return `4`") == (Example("f(2)", "4"),)


def test_the_names_a_task_adds():
    assert added_names("Add a function quantify(count, word) and a method is_stable(self) to the Version "
                       "class in semver/version.py") == ("quantify", "is_stable")
    assert added_names("rename the function soft_str to soft_text") == ()
    # the call right after "Add", as the real suite's tasks write it
    assert added_names("import toolz fails. Add sliding_window(n, seq) to toolz/itertoolz.py: the windows") == \
        ("sliding_window",)
    assert added_names("Add `is_iso8601(datestring)` there: True when it matches") == ("is_iso8601",)
    assert added_names("add(2, 3) in calc.py returns -1; add a test") == ()  # a call of `add` adds nothing


def test_hostile_text_costs_milliseconds():
    for task in ("f(" * 50_000, "f(1) == " + "(" * 50_000, "'" * 100_000, "a.b" * 30_000 + "()", "x[" * 40_000,
                 "f(1) returns " * 2_000, "f(1) == ) " * 2_000):
        started = time.process_time()  # this process's CPU time: the same on a loaded machine
        examples(task)
        # milliseconds when linear; a pattern that backtracks over these lengths takes minutes: only that fails
        assert time.process_time() - started < 5, task[:20]


def test_the_modules_are_the_package_then_the_file(tmp_path):
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src" / "pkg" / "mod.py").write_text("")
    (tmp_path / "calc.py").write_text("")
    assert modules(tmp_path, ["src/pkg/mod.py", "calc.py", "README.md"]) == (["pkg", "pkg.mod", "calc"],
                                                                             ["src", "."])


def test_a_program_that_died_leaves_its_examples_failed_and_stray_lines_count_for_nothing():
    found = (Example("f(1)", "2"), Example("f(2)", "3"))
    output = 'cli-agent-example {"i": 0, "ok": true, "detail": "gave 2"}\ncli-agent-example {bad\nSegmentation fault'
    first, second = verdicts(found, output)
    assert first.ok is True and second.ok is False and "Segmentation fault" in second.detail


def _checked(ws: Path, task: real.RealTask) -> list[bool | None]:
    found = examples(task.prompt)
    # the files the task names, else those a right fix changes (as a run's verification takes the edited ones)
    files = named_files(task.prompt, Workspace(ws)) or list(dict.fromkeys(edit[0] for edit in task.change))
    names, folders = modules(ws, files)
    program = script(found, names, folders, added_names(task.prompt))
    done = subprocess.run([sys.executable, "-c", program], cwd=ws, capture_output=True, text=True, timeout=60,
                          env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1"})
    return [v.ok for v in verdicts(found, done.stdout + done.stderr)]


STATED = [t for t in real.load_real_tasks() if examples(t.prompt)]


def test_most_of_the_real_suite_states_examples():
    assert len(STATED) >= 10


@pytest.mark.slow
@pytest.mark.parametrize("task", STATED, ids=[t.name for t in STATED])
def test_each_real_task_s_examples_fail_before_and_hold_after(task, tmp_path):
    if real_sdist.cached_sdist(task.project, real_sdist.suite_cache()) is None:
        pytest.skip(f"the suite's cache has no sdist of {task.project.pin} (cli-agent eval --suite real fetches it)")
    prepared = real.prepare(task, tmp_path)
    ws = prepared.workspace
    assert True not in _checked(ws, task)  # false, or unable to run (a function the task takes out is not there)
    real.reference_fix(task, prepared)
    after = _checked(ws, task)
    assert True in after and False not in after


# -- through the CLI ---------------------------------------------------------------------------------------------

STATES = "add(2, 3) returns -1, it should be 5"
FIX = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}


@pytest.fixture
def untested(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose own tests do not see the bug."""
    ws, home = calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\n")
    (ws / "tests" / "test_calc.py").write_text("def test_other():\n    assert True\n")
    return ws, home


@pytest.mark.slow
def test_a_change_the_tests_pass_but_the_task_s_example_refutes_goes_back_to_the_model(tmp_path, untested):
    ws, home = untested
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, RIGHT, DONE],
                                   task=STATES)
    assert code == 0 and report["verified"] is True, report
    assert "the task's 1 example(s) hold" in report["tests"]
    feedback = [t for t in user_messages(trace) if "fail after your change" in t]
    assert len(feedback) == 1 and "The examples your task states" in feedback[0]
    assert "add(2, 3) == 5: gave 6" in feedback[0]
    assert not (ws / "__pycache__").exists()  # the check ran in the sandbox: it left nothing


@pytest.mark.slow
def test_an_example_still_refuted_after_the_rounds_ends_with_exit_8(tmp_path, untested):
    ws, home = untested
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE, DONE, DONE], task=STATES)
    assert code == 8 and report["verified"] is False, report
    assert report["tests"] == "add(2, 3) == 5: gave 6", report  # the example, and what it gave
    assert "the examples your task states fail" in report["message"]


@pytest.mark.slow
def test_an_example_naming_something_undefined_is_skipped(tmp_path, untested):
    ws, home = untested
    code, report, _ = run_json(tmp_path, ws, home, [READ, FIX, DONE],
                               task="add(2, 3) returns -1, it should be 5, as sub(5, 3) should be 2")
    assert code == 0 and report["verified"] is True, report
    assert "the task's 1 example(s) hold" in report["tests"]


def test_the_examples_run_with_the_tests_interpreter(tmp_path):
    from cli_agent.agent.judge.verify import Verifier

    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    (tmp_path / ".venv" / "bin" / "python").write_text("")
    python = {command: Verifier(command, None, tmp_path)._python()  # type: ignore[arg-type]
              for command in ("/opt/py/bin/python3.12 -m pytest -q", ".venv/bin/pytest -x", "pytest -q",
                              "bin/pytest -q", "pytest -k 'unbalanced")}
    assert python == {"/opt/py/bin/python3.12 -m pytest -q": "/opt/py/bin/python3.12",
                      ".venv/bin/pytest -x": ".venv/bin/python", "pytest -q": "python3", "bin/pytest -q": "python3",
                      "pytest -k 'unbalanced": "python3"}


@pytest.mark.slow
def test_a_module_that_does_not_import_leaves_the_judging_to_the_tests(tmp_path):
    (tmp_path / "calc.py").write_text("import not_installed_anywhere\n")
    found = examples("add(2, 3) should be 5")
    program = script(found, ["calc"], ["."], ())
    done = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    (verdict,) = verdicts(found, done.stdout)
    assert verdict.ok is None and "ModuleNotFoundError" in verdict.detail

"""Verification: after a run's changes, the harness runs the project's tests in the command sandbox; failures go back
to the model for up to `verify_rounds` repairs; a run ends "done" only with the tests passing, else with exit 8
(`tests_failed`). Driven through the real CLI, the real sandbox and real pytest runs, with the scripted model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from clikit import calc_project, cli
from verifykit import DONE, PYTEST, READ, RIGHT, WRONG, run_json, user_messages

from cli_agent.agent.judge.proof.test_output import plain
from cli_agent.agent.judge.verify import nearest_tests, summary_line, trimmed_failures


@pytest.fixture
def project(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\n")
    (ws / "tests" / "test_other.py").write_text("def test_other():\n    assert True\n")
    return ws, home

# -- the pieces ---------------------------------------------------------------------------------------------------

PYTEST_FAILURE = """\
.F                                                                       [100%]
=================================== FAILURES ===================================
___________________________________ test_add ___________________________________

    def test_add():
>       assert add(2, 3) == 5
E       assert 6 == 5
E        +  where 6 = add(2, 3)

tests/test_calc.py:5: AssertionError
=========================== short test summary info ============================
FAILED tests/test_calc.py::test_add - assert 6 == 5
1 failed, 1 passed in 0.03s
"""


def test_the_failures_are_trimmed_to_the_assertion_the_frame_and_the_summary() -> None:
    trimmed = trimmed_failures(PYTEST_FAILURE)
    assert "E       assert 6 == 5" in trimmed and "tests/test_calc.py:5: AssertionError" in trimmed
    assert "FAILED tests/test_calc.py::test_add - assert 6 == 5" in trimmed
    assert "[100%]" not in trimmed and "def test_add" not in trimmed
    assert len(trimmed_failures("x\n" * 100_000, limit=500)) < 600  # bounded, whatever the output
    assert summary_line(PYTEST_FAILURE, 1, False) == "1 failed, 1 passed in 0.03s"
    assert summary_line("==== 3 passed in 0.01s ====", 0, False) == "3 passed in 0.01s"
    assert summary_line("boom", 2, False) == "exit code 2"
    assert summary_line("collected 3 items\n", 137, False) == ("exit code 137 (killed: SIGKILL, most often for "
                                                             "running out of memory)")


def test_a_coloured_run_reads_as_a_plain_one() -> None:
    red, green, bold, off = "\x1b[31m", "\x1b[32m", "\x1b[1m", "\x1b[0m"
    coloured = PYTEST_FAILURE.replace("E       assert 6 == 5", f"{bold}{red}E       assert 6 == 5{off}").replace(
        "1 failed, 1 passed in 0.03s", f"{red}{bold}1 failed{off}, {green}1 passed{off}{red} in 0.03s{off}")
    assert summary_line(coloured, 1, False) != "1 failed, 1 passed in 0.03s"  # what --color=yes did to the verdict
    assert plain(coloured) == PYTEST_FAILURE
    assert summary_line(plain(coloured), 1, False) == "1 failed, 1 passed in 0.03s"
    assert plain("\x1b]8;;https://x\x07link\x1b]8;;\x07 \x1b(Bdone\x1bM") == "link done"
    assert plain("no colour") == "no colour"


@pytest.mark.slow
def test_a_project_that_asks_pytest_for_colour_gets_the_verdict_and_the_failures_in_plain_text(
        tmp_path: Path, project) -> None:
    ws, home = project
    (ws / "pytest.ini").write_text("[pytest]\naddopts = --color=yes\n")  # as wcwidth's tox.ini does
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, DONE],
                                   env_extra={"CLI_AGENT_VERIFY_ROUNDS": "1"})
    assert code == 8 and report["tests"].startswith("1 failed"), report
    feedback = next(t for t in user_messages(trace) if "tests fail after your change" in t)
    assert "E       assert 6 == 5" in feedback and "\x1b" not in feedback


def test_the_nearest_tests_are_the_ones_that_import_the_changed_module(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "tests").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text("X = 1\n")
    (tmp_path / "tests" / "test_a.py").write_text("from pkg.mod import X\n")
    (tmp_path / "tests" / "test_b.py").write_text("import pkg.mod as m\n")
    (tmp_path / "tests" / "test_c.py").write_text("from pkg import mod, other\n")
    (tmp_path / "tests" / "test_d.py").write_text("# mod is mentioned, never imported\nimport modular\n")
    (tmp_path / "tests" / "test_self.py").write_text("")
    found = nearest_tests(tmp_path, ["pkg/mod.py", "tests/test_self.py", "README.md"])
    assert found == ["tests/test_a.py", "tests/test_b.py", "tests/test_c.py", "tests/test_self.py"]
    assert nearest_tests(tmp_path, ["pkg/unused.py"]) == []  # nothing imports it: the whole command runs


# -- through the CLI ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_wrong_fix_gets_the_failures_back_and_the_second_round_passes(tmp_path: Path, project) -> None:
    ws, home = project
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, RIGHT, DONE])
    assert code == 0, report
    assert report["status"] == "done" and report["verified"] is True and "passed" in report["tests"]
    assert "a + b" in (ws / "calc.py").read_text()
    feedback = [t for t in user_messages(trace) if "tests fail after your change" in t]
    assert len(feedback) == 1 and "assert 6 == 5" in feedback[0] and "tests/test_calc.py" in feedback[0]
    assert not (ws / "__pycache__").exists() and not (ws / ".pytest_cache").exists()  # the runs left nothing
    verifications = [json.loads(line) for line in trace.splitlines() if '"verification"' in line]
    assert [v["phase"] for v in verifications] == ["running", "failed", "running", "passed"]


@pytest.mark.slow
def test_the_feedback_shows_the_changed_lines_numbered_so_a_line_repair_needs_no_read(tmp_path: Path, project) -> None:
    ws, home = project
    line_2 = {"path": "calc.py", "start_line": 2, "end_line": 2, "new": "return a + b"}
    by_line = {"tool_calls": [{"name": "replace_lines", "arguments": line_2}]}
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, by_line, DONE])
    assert code == 0 and report["verified"] is True, report
    feedback = next(t for t in user_messages(trace) if "tests fail after your change" in t)
    assert "--- calc.py\n1| def add(a, b):\n2|     return a * b" in feedback
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"  # and re-indented to its place


@pytest.mark.slow
def test_tests_still_failing_after_the_rounds_end_the_run_with_exit_8(tmp_path: Path, project) -> None:
    ws, home = project
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE, DONE],
                               env_extra={"CLI_AGENT_VERIFY_ROUNDS": "1"})
    assert code == 8 and report["exit_code"] == 8 and report["status"] == "tests_failed"
    assert report["verified"] is False and "1 failed" in report["tests"]
    assert report["files_changed"] == ["calc.py"]  # the change stays, for the user to judge (undo is there)


@pytest.mark.slow
def test_verify_false_ends_done_with_verified_null(tmp_path: Path, project) -> None:
    ws, home = project
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE], env_extra={"CLI_AGENT_VERIFY": "false"})
    assert code == 0 and report["verified"] is None and report["tests"] == "verify = false"  # said, never silent
    assert '"running"' not in trace  # no test ran


@pytest.mark.slow
def test_an_untrusted_project_config_cannot_turn_verification_off(tmp_path: Path, project) -> None:
    ws, home = project
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("verify = false\nverify_rounds = 0\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE])
    assert code == 8 and report["verified"] is False  # verify = false ignored; verify_rounds = 0 narrows: taken
    assert any("verify" in note for note in report["notes"]), report["notes"]
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE], env_extra={"CLI_AGENT_TRUST": "1"})
    assert code == 0 and report["verified"] is None  # trusted: the project may turn it off


@pytest.mark.slow
def test_a_hanging_test_is_cut_and_reported_as_failing(tmp_path: Path, project) -> None:
    ws, home = project
    (ws / "tests" / "test_hang.py").write_text("import time\n\n\ndef test_hang():\n    time.sleep(600)\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE],
                               env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0", "CLI_AGENT_COMMAND_TIMEOUT_MAX": "4"})
    assert code == 8 and report["verified"] is False
    assert "timed out" in report["tests"] or "failed" in report["tests"], report["tests"]


@pytest.mark.slow
def test_a_project_whose_tests_collect_nothing_is_not_called_verified(tmp_path: Path, project) -> None:
    ws, home = project
    for test in (ws / "tests").iterdir():
        test.unlink()
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE])
    assert code == 0 and report["verified"] is None and "no tests ran" in report["tests"]


@pytest.mark.slow
def test_a_run_that_changed_nothing_runs_no_tests(tmp_path: Path, project) -> None:
    ws, home = project
    code, report, trace = run_json(tmp_path, ws, home, [READ, {"text": "add() subtracts."}])
    assert code == 0 and report["verified"] is None and '"verification"' not in trace


MUL_TASK = "Add a function mul(a, b) to calc.py so that `from calc import mul` works."
ADD_MUL = {"tool_calls": [{"name": "edit_file", "arguments": {
    "path": "calc.py", "old": "    return a + b\n",
    "new": "    return a + b\n\n\ndef mul(a, b):\n    return a * b\n"}}]}


@pytest.mark.slow
def test_a_run_that_changed_nothing_while_the_tasks_import_fails_is_not_done(tmp_path: Path, project) -> None:
    ws, home = project
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")  # the tests pass: only the import fails
    code, report, _ = run_json(tmp_path, ws, home, [{"text": "Done: mul is added."}], task=MUL_TASK)
    assert code == 8 and report["status"] == "tests_failed" and report["verified"] is False, report
    assert report["message"].startswith("nothing was changed, and the examples your task states fail"), report
    assert "from calc import mul" in report["tests"] and "ImportError" in report["tests"], report
    code, report, _ = run_json(tmp_path, ws, home, [{"text": "Done: mul is added."}, READ, ADD_MUL, DONE], "--attempts",
                               "2", task=MUL_TASK, env_extra=LOOP_CANDIDATES)
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report  # --attempts goes on
    assert "def mul" in (ws / "calc.py").read_text()


@pytest.mark.slow
def test_a_file_the_run_deleted_unasked_is_named_in_the_verdict(tmp_path: Path, project) -> None:
    ws, home = project
    (ws / "calc.pyi").write_text("def add(a: int, b: int) -> int: ...\n")
    delete = {"tool_calls": [{"name": "delete_file", "arguments": {"path": "calc.pyi"}}]}
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, delete, RIGHT, DONE])
    assert code == 0 and report["verified"] is True, report
    assert report["tests"].endswith("; deleted by this run, though the task asks for no deletion: calc.pyi"), report
    (ws / "calc.pyi").write_text("def add(a: int, b: int) -> int: ...\n")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, delete, RIGHT, DONE],
                               task="add(2, 3) returns -1: fix add and delete the stale stub calc.pyi")
    assert code == 0 and "deleted" not in report["tests"], report


# -- several candidates, the tests as the judge -------------------------------------------------------------------

LOOP_CANDIDATES = {"CLI_AGENT_TASK_FILES": "false"}  # the task names `add`: candidate 2 would be a rewrite


def edit(old: str, new: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": old, "new": new}}]}


@pytest.mark.slow
def test_the_third_candidate_passes_and_is_applied_as_one_change_set(tmp_path: Path, project) -> None:
    ws, home = project
    replies = [READ, WRONG, DONE,  # the run itself: a * b, the tests fail, no repair round
               READ, edit("a - b", "b - a"), DONE,  # candidate 2, from the original file: fails too
               READ, edit("a - b", "a + b"), DONE]  # candidate 3: passes
    code, report, trace = run_json(tmp_path, ws, home, replies, "--attempts", "3",
                                   env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0", **LOOP_CANDIDATES})
    assert code == 0, report
    assert report["verified"] is True and report["attempt"] == 3 and "passed" in report["tests"]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert sorted(p.name for p in ws.iterdir()) == ["calc.py", "conftest.py", "tests"]  # nothing else came back
    phases = [json.loads(line)["phase"] for line in trace.splitlines() if '"verification"' in line]
    assert phases == ["running", "failed", "running", "failed", "running", "passed"]
    assert any("candidate 2 of 3 did not pass" in w for w in report["warnings"])


@pytest.mark.slow
def test_a_run_stuck_on_a_failing_edit_gets_other_candidates_too(tmp_path: Path, project) -> None:
    ws, home = project
    stuck = edit("a -- b", "a + b")  # never in the file: the same failure three times ends the run (exit 7)
    replies = [READ, stuck, stuck, stuck,
               READ, edit("a - b", "a + b"), DONE]  # candidate 2: passes
    code, report, _ = run_json(tmp_path, ws, home, replies, "--attempts", "2", env_extra=LOOP_CANDIDATES)
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    code, report, _ = run_json(tmp_path, ws, home, [READ, stuck, stuck, stuck])  # no attempts: as before
    assert code == 7 and report["verified"] is None


@pytest.mark.slow
def test_no_candidate_passing_ends_with_exit_8_and_the_first_change_kept(tmp_path: Path, project) -> None:
    ws, home = project
    replies = [READ, WRONG, DONE, READ, edit("a - b", "b - a"), DONE]
    code, report, _ = run_json(tmp_path, ws, home, replies, "--attempts", "2",
                               env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0"})
    assert code == 8 and report["verified"] is False and "nor did 1 more candidate" in report["message"]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"


@pytest.mark.slow
def test_a_candidate_needs_approval_like_any_change_set(tmp_path: Path, project) -> None:
    ws, home = project
    script = tmp_path / "script.json"
    script.write_text(json.dumps([READ, WRONG, DONE, READ, edit("a - b", "a + b"), DONE]))
    done = cli(["-p", "fix add", "--model", f"scripted:{script}", "-C", str(ws), "--attempts", "2",
                "--output", "json"], home=home,
               env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0", "CLI_AGENT_APPROVAL": "edits", **LOOP_CANDIDATES})
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["attempt"] == 2  # "edits" approves edits, the candidate's set too
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    script.write_text(json.dumps([READ, WRONG, DONE, READ, edit("a - b", "a + b"), DONE]))
    (ws / "keep.txt").write_text("x")
    done = cli(["-p", "fix add", "--model", f"scripted:{script}", "-C", str(ws), "--attempts", "2",
                "--output", "json"], home=home, env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0", **LOOP_CANDIDATES})
    assert done.returncode == 3  # nobody to ask: the first change is denied, no candidate is tried
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a - b\n"


# -- the tests stay the judge ------------------------------------------------------------------------------------

READ_TEST = {"tool_calls": [{"name": "read_file", "arguments": {"path": "tests/test_calc.py"}}]}
EDIT_TEST = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "tests/test_calc.py", "old": "== 5",
                                                                "new": "== 6"}}]}


def test_a_repair_may_not_rewrite_a_test_the_task_does_not_name() -> None:
    from cli_agent.agent.judge.repair import tests_kept
    from cli_agent.agent.run_state import RunState
    from cli_agent.contracts.change import Change
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.tools.dispatch import Prepared

    def prepared(path: str) -> Prepared:
        change = Change(tool="edit_file", kind="edit", path=path, before=b"a", after=b"b")
        return Prepared(call=ToolCall(id="c1", name="edit_file", arguments={}), change=change)

    fresh, repairing = RunState(deadline=0, task="fix add()"), RunState(deadline=0, task="fix add()", verify_round=1)
    assert tests_kept(fresh, prepared("tests/test_calc.py")).error is None  # before the tests have judged
    assert tests_kept(repairing, prepared("calc.py")).error is None  # the code under test
    refused = tests_kept(repairing, prepared("tests/test_calc.py"))
    assert refused.change is None and refused.error is not None and "tests/test_calc.py" in refused.error.errors[0]
    named = RunState(deadline=0, task="update test_calc.py for the new rule", verify_round=1)
    assert tests_kept(named, prepared("tests/test_calc.py")).error is None  # the task asks for it


@pytest.mark.slow
def test_a_repair_round_that_edits_the_test_is_refused_and_the_code_fix_passes(tmp_path: Path, project) -> None:
    ws, home = project
    test_before = (ws / "tests" / "test_calc.py").read_text()
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, READ_TEST, EDIT_TEST, RIGHT, DONE])
    assert code == 0 and report["verified"] is True, report
    assert (ws / "tests" / "test_calc.py").read_text() == test_before
    results = [json.loads(line) for line in trace.splitlines() if '"tool_result"' in line]
    refused = [r for r in results if r["tool"] == "edit_file" and not r["envelope"]["ok"]]
    assert len(refused) == 1 and "the project's tests judge this repair" in refused[0]["envelope"]["errors"][0]

"""A run's changes are never "done" unproven in silence: the third verdict ("the tests could not run"), no tests
found, `verify = "required"` / `--require-verified` (exit 9), the task's examples checked without a test command,
and the verdict on the files as a run leaves them when it ends for another reason. Through the real CLI, the real
sandbox and real pytest runs, with the scripted model."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest
from clikit import calc_project, cli
from verifykit import DONE, PYTEST, READ, RIGHT, WRONG, run_json, user_messages

pytestmark = pytest.mark.slow

FIX = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}


def project(tmp_path: Path, test_command: str | None = PYTEST) -> tuple[Path, Path]:
    config = f"test_command = {json.dumps(test_command)}\n" if test_command else ""
    return calc_project(tmp_path, config)


@pytest.mark.parametrize(("command", "why"), [
    ("no-such-test-runner -q", "no-such-test-runner: command not found (exit 127)"),
    # the runner itself broken: an older pytest without what its entry point imports
    (f"{sys.executable} -c {shlex.quote('from _pytest.config import _no_such_entry_point')}",
     "the test runner failed to start: ImportError: cannot import name '_no_such_entry_point'"),
])
def test_tests_that_could_not_run_are_the_third_verdict_not_sent_to_the_model(tmp_path: Path, command: str,
                                                                             why: str) -> None:
    ws, home = project(tmp_path, command)
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, DONE])
    assert code == 0 and report["status"] == "done" and report["verified"] is None, report
    assert report["tests"].startswith(f"the tests could not run: {why}"), report["tests"]
    assert not any("fail after your change" in m for m in user_messages(trace))  # nothing for the model to fix
    phases = [json.loads(line)["phase"] for line in trace.splitlines() if '"verification"' in line]
    assert phases == ["running", "unverified"]  # one line says what happened
    code, report, _ = run_json(tmp_path, ws, home, [READ, RIGHT, DONE], "--require-verified")
    assert code == 9 and report["status"] == "unverified" and report["exit_code"] == 9, report
    assert report["message"].startswith("not verified: the tests could not run")
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, WRONG, DONE], "--attempts", "3")
    assert code == 0 and report["verified"] is None and "attempt" not in report, report
    assert not any("candidate" in w for w in report["warnings"])  # a verdict that could not run judges none


def test_a_broken_conftest_could_not_run_but_a_conftest_the_change_broke_fails(tmp_path: Path) -> None:
    ws, home = project(tmp_path)
    (ws / "conftest.py").write_text("import no_such_plugin_package\n")
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, DONE])
    assert code == 0 and report["verified"] is None and "a broken conftest.py" in report["tests"], report
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "conftest.py").write_text("import calc\n")
    broken = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "return a - b",
                                                                 "new": "return a - b\n\n\nundefined_name()"}}]}
    code, report, trace = run_json(tmp_path, ws, home, [READ, broken, DONE, DONE],
                                   env_extra={"CLI_AGENT_VERIFY_ROUNDS": "1"})
    assert code == 8 and report["verified"] is False, report  # calc.py, which the run changed, is in the traceback
    assert any("fail after your change" in m for m in user_messages(trace))


def test_no_tests_found_is_said_and_required_proof_ends_with_exit_9(tmp_path: Path) -> None:
    ws, home = project(tmp_path, None)
    for path in (ws / "tests" / "test_calc.py", ws / "conftest.py"):
        path.unlink()
    code, report, trace = run_json(tmp_path, ws, home, [READ, FIX, DONE], task="fix add in calc.py")
    assert code == 0 and report["verified"] is None and report["tests"] == "no tests found (set test_command)"
    assert '"phase": "unverified"' in trace
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, FIX, DONE], task="fix add in calc.py",
                               env_extra={"CLI_AGENT_VERIFY": "required"})
    assert code == 9 and report["status"] == "unverified", report
    assert report["message"] == ('not verified: no tests found (set test_command); proof is required '
                                 '(--require-verified, or verify = "required")')
    assert (ws / "calc.py").read_text().count("a + b") == 1  # the change stays: undo is there
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, FIX, DONE], "--require-verified", task="fix add in calc.py")
    assert code == 9 and "--require-verified" in report["message"], report  # the flag a CI user typed


def test_the_text_output_says_not_verified_on_stderr(tmp_path: Path) -> None:
    ws, home = project(tmp_path, None)
    for path in (ws / "tests" / "test_calc.py", ws / "conftest.py"):
        path.unlink()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([READ, FIX, DONE]))
    done = cli(["-p", "fix add in calc.py", "--model", f"scripted:{script}", "-C", str(ws), "--yes"], home=home,
               timeout=180)
    assert done.returncode == 0 and "Fixed add()." in done.stdout
    assert "! not verified: no tests found (set test_command)" in done.stderr, done.stderr


def test_the_task_s_examples_are_checked_in_a_python_project_with_no_test_command(tmp_path: Path) -> None:
    ws, home = project(tmp_path, None)
    for path in (ws / "tests" / "test_calc.py", ws / "conftest.py"):
        path.unlink()
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, RIGHT, DONE],
                                   task="In calc.py, add(2, 3) should be 5")
    assert code == 0 and report["verified"] is None, report  # the examples hold, but no test proved the rest
    assert report["tests"] == "no tests found (set test_command); the task's 1 example(s) hold"
    feedback = [m for m in user_messages(trace) if "fail after your change" in m]
    assert feedback and "add(2, 3) == 5: gave 6" in feedback[0]


def test_a_run_that_ends_at_its_step_limit_reports_the_verdict_on_the_files_it_left(tmp_path: Path) -> None:
    ws, home = project(tmp_path)
    code, report, trace = run_json(tmp_path, ws, home, [READ, WRONG, READ], "--max-steps", "2")
    assert code == 4 and report["status"] == "step_limit" and report["verified"] is False, report
    assert "1 failed" in report["tests"]
    assert not any("fail after your change" in m for m in user_messages(trace))  # reported, not repaired
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    code, report, _ = run_json(tmp_path, ws, home, [READ, FIX, READ], "--max-steps", "2")
    assert code == 4 and report["verified"] is True and "passed" in report["tests"], report


def _edit(path: str, old: str, new: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "edit_file", "arguments": {"path": path, "old": old, "new": new}}]}


def test_a_change_the_old_tests_pass_but_the_task_s_statement_refutes_is_not_verified(tmp_path: Path) -> None:
    ws, home = project(tmp_path)
    read_test = {"tool_calls": [{"name": "read_file", "arguments": {"path": "tests/test_calc.py"}}]}
    in_the_test = _edit("tests/test_calc.py", "from calc import add\n",
                        "from calc import add\n\n\ndef mul(a, b):\n    return a * b\n")  # the name, in the wrong place
    in_calc = _edit("calc.py", "    return a + b\n", "    return a + b\n\n\ndef mul(a, b):\n    return a * b\n")
    task = ("Fix add in calc.py, and add a function `mul(a, b)` to calc.py that multiplies: `from calc import mul` "
            "works.")
    code, report, trace = run_json(tmp_path, ws, home, [READ, FIX, read_test, in_the_test, DONE, in_calc, DONE],
                                   task=task)
    assert code == 0 and report["verified"] is True, report
    assert report["tests"].endswith("; the task's 2 statement(s) hold"), report["tests"]
    feedback = [m for m in user_messages(trace) if "fail after your change" in m]
    assert len(feedback) == 1 and "`from calc import mul` works: ImportError: cannot import name 'mul'" in feedback[0]
    assert "`mul` is defined: not defined in calc" in feedback[0]


@pytest.mark.usefixtures("isolated_home")
def test_an_editor_over_acp_is_told_the_change_is_not_verified(tmp_path: Path) -> None:
    import asyncio
    import os

    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
    from acp.schema import AllowedOutcome, RequestPermissionResponse

    ws, _ = project(tmp_path, None)
    for path in (ws / "tests" / "test_calc.py", ws / "conftest.py"):
        path.unlink()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([READ, FIX, DONE]))
    said: list[str] = []  # the turn's own text: verification lines come as the agent's message, not as thoughts

    class Client:
        async def request_permission(self, options: list, session_id: str, tool_call: object, **kw: object) -> object:
            return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))

        async def session_update(self, session_id: str, update: object, **kw: object) -> None:
            if getattr(update, "session_update", "") == "agent_message_chunk":
                said.append(update.content.text)  # type: ignore[attr-defined]  # a message chunk has text content

    async def main() -> str:
        env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI"))}
        client: Any = Client()  # a test client: the two methods a turn calls
        async with spawn_agent_process(client, sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}",
                                       "acp", "-C", str(ws), env=env) as (conn, _process):
            await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
            session = await conn.new_session(cwd=str(ws))
            done = await asyncio.wait_for(conn.prompt(session_id=session.session_id,
                                                      prompt=[text_block("fix add in calc.py")]), 120)
            return str(done.stop_reason)

    assert asyncio.run(main()) == "end_turn"
    assert "! not verified: no tests found (set test_command)" in "".join(said), said


def test_config_show_names_the_test_command_of_the_released_inflection_layout(tmp_path: Path) -> None:
    ws, home = tmp_path / "inflection-0.5.1", tmp_path / "home"
    ws.mkdir()
    for name in ("inflection.py", "setup.py", "test_inflection.py", "tox.ini"):
        (ws / name).write_text("[tox]\nenvlist = py3\n" if name == "tox.ini" else "")
    done = cli(["config", "show", "-C", str(ws)], home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("# tests: "), done.stdout
    assert "pytest -q  # found: test_inflection.py (pytest finds test_*.py and *_test.py)" in done.stdout
    done = cli(["config", "show", "-C", str(ws)], home=home, env_extra={"CLI_AGENT_TEST_COMMAND": "make check"})
    assert done.stdout.splitlines()[-1] == "# tests: make check  # test_command, env CLI_AGENT_TEST_COMMAND"


def test_a_rename_made_in_the_test_file_with_the_old_name_kept_is_not_verified(tmp_path: Path) -> None:
    ws, home = project(tmp_path)
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    read_test = {"tool_calls": [{"name": "read_file", "arguments": {"path": "tests/test_calc.py"}}]}
    in_the_test = _edit("tests/test_calc.py", "from calc import add\n",
                        "from calc import add\n\n\ndef plus(a, b):\n    return add(a, b)\n")
    code, report, _ = run_json(tmp_path, ws, home, [read_test, in_the_test, DONE],
                               env_extra={"CLI_AGENT_VERIFY_ROUNDS": "0"},
                               task="Rename `add` to `plus`. Do not keep the old name.")
    assert code == 8 and report["verified"] is False, report  # the old tests pass; what the task states does not
    assert report["tests"] == "`plus` is defined: not defined in calc; add still is (in calc) (and 1 more of the " \
                              "task's 2 checks)", report["tests"]

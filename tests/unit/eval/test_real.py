"""The real-task suite: every task's check fails on the broken (or unfinished) project and passes on the fixed
one; each project's own vendored tests pass as shipped and fail on each bug task's broken copy; a scripted model runs
one task end to end through the CLI; drift and bad options are usage errors."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import reaped
from places import REPO
from sandboxkit import sandboxed

from cli_agent.cli.main import run as cli_run
from cli_agent.contracts.errors import UsageError
from cli_agent.eval import real
from cli_agent.eval.real import apply_edits, grade, load_real_tasks, prepare, variant_settings
from cli_agent.prompt.project_tests import detect_test_command

pytestmark = pytest.mark.usefixtures("isolated_home")
TASKS = load_real_tasks()
PROJECTS = sorted({t.project for t in TASKS})
BUG_TASKS = [t for t in TASKS if t.breaks]
# The kinds of change the suite must hold at least one task of (the kind's text names it).
KINDS = ("a wrong condition", "a wrong operator", "an off-by-one", "a missing case", "a new function",
         "a new method", "a multi-file rename")


def test_sixteen_tasks_on_three_projects_covering_each_kind():
    assert len(TASKS) >= 16 and len(PROJECTS) >= 3
    assert len({t.name for t in TASKS}) == len(TASKS)
    for kind in KINDS:
        assert any(kind in t.kind for t in TASKS), f"no task of the kind {kind!r}"
    assert all(t.breaks or t.solve for t in TASKS)
    assert all(not t.breaks or not t.solve for t in TASKS)  # a bug task's fix is the project as shipped
    rename = next(t for t in TASKS if "multi-file" in t.kind)
    assert len({file for file, _, _ in rename.solve}) >= 2


def test_the_docs_list_every_task_with_its_project_and_kind():
    docs = (REPO / "docs" / "editing.md").read_text(encoding="utf-8")
    for task in TASKS:
        assert f"| `{task.name}` | {task.project} | {task.kind} |" in docs, task.name


@pytest.mark.parametrize("project", PROJECTS)
def test_each_project_ships_its_own_tests_and_a_licence(project):
    root = real._root() / "real_projects" / project
    assert list((root / "tests").glob("test_*.py")) and list(root.glob("LICENSE*"))
    assert detect_test_command(root) in ("pytest -q", "python3 -m pytest -q")


def _own_tests(ws: Path) -> subprocess.CompletedProcess[str]:
    """The project's own test suite, run the way the harness does (`pytest -q` at the root), stopping at a failure."""
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-x"], cwd=ws, capture_output=True, text=True,
                          timeout=120, env={"PATH": "/usr/bin:/bin", "PYTHONDONTWRITEBYTECODE": "1",
                                            "PYTHONNOUSERSITE": "1"})


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
@pytest.mark.parametrize("project", PROJECTS)
def test_each_project_s_own_tests_pass_as_shipped_in_the_command_sandbox(project, tmp_path):
    ws = tmp_path / project
    shutil.copytree(real._root() / "real_projects" / project, ws)
    run = sandboxed(ws, f"{sys.executable} -m pytest -q")
    assert run.outcome.exit_code == 0, run.outcome.output[-2000:]
    assert " passed" in run.outcome.output.strip().splitlines()[-1]
    assert not run.changes.changes  # a test run leaves nothing to approve


@pytest.mark.slow
@pytest.mark.parametrize("task", BUG_TASKS, ids=[t.name for t in BUG_TASKS])
def test_each_bug_breaks_the_project_s_own_tests(task, tmp_path):
    """What verification after a change relies on: the project's own tests see each bug, not only its check."""
    done = _own_tests(prepare(task, tmp_path))
    assert done.returncode == 1, done.stdout[-2000:]
    assert " failed" in done.stdout.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("task", [t for t in TASKS if t.solve], ids=[t.name for t in TASKS if t.solve])
def test_each_reference_solution_keeps_the_project_s_own_tests_passing(task, tmp_path):
    ws = prepare(task, tmp_path)
    apply_edits(task, ws, task.solve)
    done = _own_tests(ws)
    assert done.returncode == 0, done.stdout[-2000:]


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_each_check_fails_before_and_passes_after(task, tmp_path):
    ws = prepare(task, tmp_path)
    assert grade(task, ws), "the check passes on the broken project: it cannot fail"
    if task.solve:
        apply_edits(task, ws, task.solve)
    else:  # a bug task: the project as shipped is the fix
        shutil.rmtree(ws)
        shutil.copytree(real._root() / "real_projects" / task.project, ws)
    assert grade(task, ws) == ""


@pytest.mark.slow
def test_the_model_cannot_pass_by_changing_the_tests(tmp_path):
    task = next(t for t in TASKS if t.name == "escape-amp")
    ws = prepare(task, tmp_path)
    (ws / task.check).write_text("print('ok')\n")
    assert "check_escape_amp" in grade(task, ws)


def test_a_drifted_project_is_refused(tmp_path):
    task = next(t for t in TASKS if t.breaks)
    drifted = real.RealTask(task.name, task.kind, task.project, task.prompt, task.check,
                            ((task.breaks[0][0], "this text is not in the file", "x"),))
    with pytest.raises(UsageError, match="drifted"):
        prepare(drifted, tmp_path)


def test_variants():
    assert variant_settings("all") == {"read_before_edit": True, "loose_edits": True, "task_files": True,
                                       "repo_map": True, "syntax_check": True, "verify": True}
    assert variant_settings("none") == dict.fromkeys(real.SWITCHES, False)
    assert variant_settings("-task_files")["task_files"] is False and variant_settings("-task_files")["loose_edits"]
    with pytest.raises(UsageError, match="unknown variant"):
        variant_settings("-nope")


@pytest.mark.slow
def test_a_scripted_model_fixes_a_real_task_through_the_cli(tmp_path, capsys):
    script = tmp_path / "amp.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "markupsafe/_native.py"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "markupsafe/_native.py", "old": '        s.replace(">", "&gt;")',
            "new": '        s.replace("&", "&amp;")\n        .replace(">", "&gt;")'}}]},
        {"text": "Fixed."}]))
    report = tmp_path / "report.json"
    code = cli_run(["eval", "--suite", "real", "--only", "escape-amp", "--model", f"scripted:{script}",
                    "--protocols", "native", "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "escape-amp" in out and " pass " in out and "native   all                1/1 passed" in out
    (row,) = json.loads(report.read_text())["results"]
    assert row["passed"] and row["steps"] == 3 and row["tools"] == ["read_file", "edit_file"]


@pytest.mark.slow
def test_a_scripted_model_fixes_an_inflection_task_through_the_cli(tmp_path, capsys):
    script = tmp_path / "teens.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "inflection/__init__.py"}}]},
        {"tool_calls": [{"name": "edit_file", "arguments": {
            "path": "inflection/__init__.py", "old": "    if number % 100 in range(11, 13):",
            "new": "    if number % 100 in (11, 12, 13):"}}]},
        {"text": "13 is a teen too: it takes 'th'."}]))
    report = tmp_path / "report.json"
    code = cli_run(["eval", "--suite", "real", "--only", "ordinal-teens", "--model", f"scripted:{script}",
                    "--protocols", "native", "--report", str(report)])
    assert code == 0, capsys.readouterr().out
    (row,) = json.loads(report.read_text())["results"]
    assert row["task"] == "ordinal-teens" and row["passed"] and row["tools"] == ["read_file", "edit_file"]


@pytest.mark.slow
def test_a_model_that_does_nothing_fails_the_task(tmp_path, capsys):
    script = tmp_path / "lazy.json"
    script.write_text(json.dumps([{"text": "Looks fine to me."}]))
    code = cli_run(["eval", "--suite", "real", "--only", "escape-amp", "--model", f"scripted:{script}",
                    "--protocols", "native", "--report", str(tmp_path / "r.json")])
    assert code == 1 and "FAIL" in capsys.readouterr().out


@pytest.mark.slow
def test_keep_leaves_each_run_s_trace_to_read_afterwards(tmp_path, capsys):
    script = tmp_path / "lazy.json"
    script.write_text(json.dumps([{"text": "Looks fine to me."}]))
    kept = tmp_path / "kept"
    code = cli_run(["eval", "--suite", "real", "--only", "escape-amp", "--model", f"scripted:{script}",
                    "--protocols", "native", "--report", str(tmp_path / "r.json"), "--keep", str(kept)])
    assert code == 1, capsys.readouterr().out
    trace = kept / "escape-amp.native.all.trace.jsonl"
    (row,) = json.loads((tmp_path / "r.json").read_text())["results"]
    assert row["trace"] == str(trace)
    assert "Looks fine to me." in trace.read_text() and "escape(" in trace.read_text()  # the answer and the task


def test_bad_options_are_usage_errors(capsys):
    assert cli_run(["eval", "--suite", "nope"]) == 2
    assert cli_run(["eval", "--suite", "real", "--protocols", "xml"]) == 2
    assert cli_run(["eval", "--suite", "real", "--only", "no-such-task"]) == 2


@pytest.mark.slow
def test_sigterm_ends_the_whole_suite_not_just_the_task_under_way(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    script = tmp_path / "slow.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 30"}}]},
                                  {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "eval", "--suite", "real", "--only", "escape",
                             "--protocols", "native",
                             "--model", f"scripted:{script}", "--report", str(tmp_path / "r.json")],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    started = time.monotonic()
    with reaped(proc):
        time.sleep(4)  # the first of the four escape tasks is running its command
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=30)  # the other three tasks (30 s each) never start
    assert proc.returncode == 143, out
    assert time.monotonic() - started < 30

"""The real-task suite: every task's check fails on the broken (or unfinished) project and passes on the fixed
one; a scripted model runs one task end to end through the CLI; drift and bad options are usage errors."""

from __future__ import annotations

import json
import shutil

import pytest

from cli_agent.cli import run as cli_run
from cli_agent.errors import UsageError
from cli_agent.eval import real
from cli_agent.eval.real import apply_edits, grade, load_real_tasks, prepare, variant_settings

pytestmark = pytest.mark.usefixtures("isolated_home")
TASKS = load_real_tasks()


def test_at_least_eight_tasks_each_a_different_kind():
    assert len(TASKS) >= 8 and len({t.kind for t in TASKS}) == len(TASKS)
    assert all(t.breaks or t.solve for t in TASKS)


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


def test_a_model_that_does_nothing_fails_the_task(tmp_path, capsys):
    script = tmp_path / "lazy.json"
    script.write_text(json.dumps([{"text": "Looks fine to me."}]))
    code = cli_run(["eval", "--suite", "real", "--only", "escape-amp", "--model", f"scripted:{script}",
                    "--protocols", "native", "--report", str(tmp_path / "r.json")])
    assert code == 1 and "FAIL" in capsys.readouterr().out


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

"""The real suite: released projects fetched as sdists through pip, unmodified, each task's test venv outside the
workspace; every task's check fails on its broken project and passes on the reference fix; runs side by side, by
shard, and shards merged into one report.

Offline, a tiny project (`tinycalc`) is built into an sdist by the test and served from a local folder, so CI runs
the whole path for real. The suite's own 36 tasks are checked against their released sdists when the suite's cache
holds them (`cli-agent eval --suite real` fetches them; without the cache those tests skip)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from places import REPO
from realkit import FIX_ADD, SHOW_ENV, published, with_pytest

from cli_agent.cli.main import run as cli_run
from cli_agent.contracts.errors import UsageError
from cli_agent.eval import real, real_sdist
from cli_agent.eval.real import grade, load_real_tasks, prepare, reference_fix, variant_settings
from cli_agent.eval.real_run import planned, shard_of

pytestmark = pytest.mark.usefixtures("isolated_home")
TASKS = load_real_tasks()
LAYOUTS = ("tests at the root", "tests inside the package", "tests/ with tox.ini", "src layout",
           "unittest only, the runner named in tox.ini", "unittest only, the runner named in noxfile.py")


def test_forty_eight_tasks_on_eight_released_projects_over_six_layouts():
    projects = {t.project for t in TASKS}
    assert len(TASKS) >= 48 and len(projects) >= 8
    unittest_only = [p for p in projects if p.runner == "unittest"]
    assert len(unittest_only) >= 2 and all("pytest" not in p.test_deps for p in unittest_only)
    assert len({t.name for t in TASKS}) == len(TASKS)
    assert {p.layout for p in projects} >= set(LAYOUTS)
    assert all(t.change for t in TASKS)
    assert sum(t.kind.startswith("feature") for t in TASKS) >= 5  # one a project


def test_no_third_party_code_lives_in_the_package():
    eval_folder = REPO / "cli_agent" / "eval"
    assert not (eval_folder / "real_projects").exists()
    assert sorted(p.suffix for p in eval_folder.iterdir() if p.is_file()) == sorted(
        p.suffix for p in eval_folder.iterdir() if p.is_file() and p.suffix in (".py", ".toml"))


def test_the_docs_list_every_task_with_its_project_and_kind():
    docs = (REPO / "docs" / "verify.md").read_text(encoding="utf-8")
    for task in TASKS:
        assert f"| `{task.name}` | {task.project.pin} | {task.kind} |" in docs, task.name


# -- offline: a project built and served here -----------------------------------------------------------------------

@pytest.fixture
def tiny(tmp_path, monkeypatch):
    """The tinycalc suite, its cache under tmp_path (CLI_AGENT_SUITE_CACHE), its venv given pytest."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("CLI_AGENT_SUITE_CACHE", str(cache))
    suite = published(tmp_path / "published")
    tasks = load_real_tasks(suite=suite)
    with_pytest(real_sdist.project_venv(tasks[0].project, cache))
    return suite, tasks, cache


@pytest.mark.slow
def test_the_sdist_is_fetched_through_pip_and_the_venv_lives_outside_the_workspace(tiny, tmp_path):
    _suite, tasks, cache = tiny
    task = tasks[0]
    assert real_sdist.cached_sdist(task.project, cache) is None
    prepared = prepare(task, tmp_path / "run", cache)
    assert real_sdist.cached_sdist(task.project, cache) == cache / "sdists" / "tinycalc-1.0.tar.gz"
    ws, venv = prepared.workspace, prepared.venv
    assert ws.name == "tinycalc-1.0" and (ws / "PKG-INFO").is_file()  # the sdist as released
    assert not venv.is_relative_to(ws) and (venv / "pyvenv.cfg").is_file()
    shown = subprocess.run([str(venv / "bin" / "python"), "-c", "import sys, tinycalc; print(sys.prefix); "
                            "print(tinycalc.__file__)"], capture_output=True, text=True, timeout=60, check=True)
    prefix, module = shown.stdout.split()
    assert Path(prefix) == venv and Path(module).is_relative_to(ws)  # the venv's Python imports the workspace
    assert "return a - b" in (ws / "tinycalc" / "__init__.py").read_text()


@pytest.mark.slow
def test_each_tiny_task_fails_broken_and_passes_with_its_reference_fix(tiny, tmp_path):
    _, tasks, cache = tiny
    for task in tasks:
        prepared = prepare(task, tmp_path / task.name, cache)
        assert "failed" in grade(task, prepared) or "error" in grade(task, prepared)
        reference_fix(task, prepared)
        assert grade(task, prepared) == ""


@pytest.mark.slow
def test_the_line_saying_why_is_plain_text_when_the_project_asks_pytest_for_colour(tiny, tmp_path):
    _, tasks, cache = tiny
    prepared = prepare(tasks[0], tmp_path / "run", cache)
    (prepared.workspace / "pytest.ini").write_text("[pytest]\naddopts = --color=yes\n")
    why = grade(tasks[0], prepared)
    assert "failed" in why and "\x1b" not in why, why


@pytest.mark.slow
def test_the_model_cannot_pass_by_changing_the_tests(tiny, tmp_path):
    _, tasks, cache = tiny
    prepared = prepare(tasks[0], tmp_path / "run", cache)
    (prepared.workspace / "test_tinycalc.py").write_text("def test_add():\n    pass\n")
    assert grade(tasks[0], prepared)


@pytest.mark.slow
def test_a_scripted_model_fixes_a_task_through_the_cli_with_two_workers(tiny, tmp_path, capsys):
    suite, _, _ = tiny
    script = tmp_path / "fix.json"
    script.write_text(json.dumps(FIX_ADD))
    report = tmp_path / "report.json"
    code = cli_run(["eval", "--suite", "real", "--tasks", str(suite), "--model", f"scripted:{script}",
                    "--protocols", "native", "--workers", "2", "--report", str(report)])
    out = capsys.readouterr().out
    assert code == 1, out  # tiny-add passes; tiny-mean gets the same script, which fixes nothing there
    rows = {r["task"]: r for r in json.loads(report.read_text())["results"]}
    assert rows["tiny-add"]["passed"] and rows["tiny-add"]["tools"] == ["edit_file"]
    assert not rows["tiny-mean"]["passed"]
    assert "pass@1 1/2" in out


@pytest.mark.slow
def test_a_run_that_ends_done_with_the_tests_failing_is_counted(tiny, tmp_path, capsys):
    suite, _, _ = tiny
    script = tmp_path / "lazy.json"
    script.write_text(json.dumps([{"text": "Looks fine to me."}]))
    report = tmp_path / "report.json"
    argv = ["eval", "--suite", "real", "--tasks", str(suite), "--only", "tiny-add", "--model", f"scripted:{script}",
            "--protocols", "native", "--report", str(report)]
    code = cli_run([*argv, "--variants", "-verify"])  # no verdict: the run ends "done" on the model's word
    out = capsys.readouterr().out
    assert code == 1 and "done with the tests failing: 1" in out, out
    (row,) = json.loads(report.read_text())["results"]
    assert row["exit_code"] == 0 and not row["passed"]
    cli_run(argv)  # with the verdict, the task's stated example fails though nothing changed: exit 8, not "done"
    assert "done with the tests failing: 0" in capsys.readouterr().out
    (row,) = json.loads(report.read_text())["results"]
    assert row["exit_code"] == 8 and not row["passed"]


@pytest.mark.slow
def test_shards_run_apart_and_merge_into_one_report(tiny, tmp_path, capsys):
    suite, _, _ = tiny
    script = tmp_path / "fix.json"
    script.write_text(json.dumps(FIX_ADD))
    reports = []
    for index in (1, 2):
        reports.append(tmp_path / f"shard{index}.json")
        cli_run(["eval", "--suite", "real", "--tasks", str(suite), "--model", f"scripted:{script}", "--protocols",
                 "native", "--shard", f"{index}/2", "--report", str(reports[-1])])
    shards = [json.loads(r.read_text()) for r in reports]
    assert [len(s["results"]) for s in shards] == [1, 1] and shards[0]["shard"] == "1/2"
    capsys.readouterr()
    merged = tmp_path / "merged.json"
    code = cli_run(["eval", "--suite", "real", "--merge", str(reports[0]), "--merge", str(reports[1]),
                    "--report", str(merged)])
    out = capsys.readouterr().out
    assert code == 1 and "1/2 passed (pass@1 1/2; done with the tests failing: 0)" in out, out
    assert {r["task"] for r in json.loads(merged.read_text())["results"]} == {"tiny-add", "tiny-mean"}
    assert cli_run(["eval", "--suite", "real", "--merge", str(reports[0])]) == 2  # shard 2/2 missing
    assert cli_run(["eval", "--suite", "real", "--merge", str(reports[0]), "--merge", str(reports[0])]) == 2


def test_shards_are_disjoint_and_together_the_plan():
    plan = planned(TASKS, ("json", "native"), ("all",))
    parts = [planned(TASKS, ("json", "native"), ("all",), (i, 5)) for i in range(1, 6)]
    sizes = [len(p) for p in parts]
    assert sum(sizes) == len(plan) and max(sizes) - min(sizes) <= 1  # as even as the plan allows
    assert sorted((r.task.name, r.protocol) for p in parts for r in p) == sorted((r.task.name, r.protocol)
                                                                                  for r in plan)
    for bad in ("0/2", "3/2", "x", "1/0", "2"):
        with pytest.raises(UsageError, match="--shard"):
            shard_of(bad)


# -- the suite's own tasks, on their released sdists ----------------------------------------------------------------

def _cached(task: real.RealTask) -> None:
    if real_sdist.cached_sdist(task.project, real_sdist.suite_cache()) is None:
        pytest.skip(f"the suite's cache has no sdist of {task.project.pin} (cli-agent eval --suite real fetches it)")


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t.name for t in TASKS])
def test_each_task_fails_broken_and_passes_with_its_reference_fix(task, tmp_path):
    _cached(task)
    prepared = prepare(task, tmp_path)
    assert grade(task, prepared), "the check passes on the broken project: it cannot fail"
    reference_fix(task, prepared)
    assert grade(task, prepared) == ""


@pytest.mark.slow
def test_a_drifted_project_is_refused(tiny, tmp_path):
    _, tasks, cache = tiny
    drifted = real.RealTask("drift", "bug", tasks[0].project, "p", "x", (("tinycalc/__init__.py", "not there", "y"),))
    with pytest.raises(UsageError, match="drifted"):
        prepare(drifted, tmp_path / "run", cache)


def test_a_task_naming_no_project_of_the_suite_is_refused(tmp_path):
    bad = tmp_path / "suite.toml"
    bad.write_text('[[project]]\nname = "a"\nversion = "1"\nlayout = "x"\ntests = ["t"]\n\n[[task]]\nname = "t"\n'
                   'kind = "k"\nproject = "b==2"\nprompt = "p"\ncheck = "c"\nchange = [{ file = "f", old = "o", '
                   'new = "n" }]\n')
    with pytest.raises(UsageError, match="no \\[\\[project\\]\\]"):
        load_real_tasks(suite=bad)


def test_variants():
    assert variant_settings("all") == dict.fromkeys(real.SWITCHES, True)
    assert variant_settings("none") == dict.fromkeys(real.SWITCHES, False)
    assert variant_settings("-task_files")["task_files"] is False and variant_settings("-task_files")["loose_edits"]
    assert variant_settings("+rewrite_first") == {**dict.fromkeys(real.SWITCHES, True), "rewrite_first": True}
    for bad in ("-nope", "+nope", "+task_files", "-rewrite_first"):
        with pytest.raises(UsageError, match="unknown variant"):
            variant_settings(bad)


def test_bad_options_are_usage_errors(tmp_path):
    assert cli_run(["eval", "--suite", "nope"]) == 2
    assert cli_run(["eval", "--suite", "real", "--protocols", "xml"]) == 2
    assert cli_run(["eval", "--suite", "real", "--only", "no-such-task"]) == 2
    assert cli_run(["eval", "--suite", "real", "--shard", "3/2"]) == 2
    assert cli_run(["eval", "--suite", "real", "--workers", "0"]) == 2
    (tmp_path / "x.json").write_text("{}")
    assert cli_run(["eval", "--suite", "real", "--merge", str(tmp_path / "x.json")]) == 2


@pytest.mark.slow
def test_sigterm_ends_the_whole_suite_and_the_runs_under_way(tiny, tmp_path):
    import os
    import signal
    import sys
    import time

    from clikit import reaped

    suite, _, cache = tiny
    script = tmp_path / "slow.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": "sleep 60"}}]},
                                  {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "CLI_AGENT_SUITE_CACHE": str(cache)}
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "eval", "--suite", "real", "--tasks", str(suite),
                             "--workers", "2", "--protocols", "native", "--model", f"scripted:{script}",
                             "--report", str(tmp_path / "r.json")], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    with reaped(proc):
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and len(list((cache / "runs").glob("*/trace.jsonl"))) < 2:
            time.sleep(0.5)  # both tasks' runs are under way
        time.sleep(2)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 143, out + err
    assert not list((cache / "runs").iterdir())  # each run's folder went with it: its process ended


def _trace_text(report: Path) -> str:
    (row,) = json.loads(report.read_text())["results"]
    return Path(row["trace"]).read_text(encoding="utf-8")


@pytest.mark.slow
def test_the_run_s_commands_get_the_project_venv_first_on_path(tiny, tmp_path, capsys):
    """As a user with the venv activated: VIRTUAL_ENV is the task's venv (outside the workspace), its bin first on
    PATH."""
    suite, _, cache = tiny
    script = tmp_path / "env.json"
    script.write_text(json.dumps(SHOW_ENV))
    report = tmp_path / "report.json"
    cli_run(["eval", "--suite", "real", "--tasks", str(suite), "--only", "tiny-add", "--model", f"scripted:{script}",
             "--protocols", "native", "--report", str(report), "--keep", str(tmp_path / "kept")])
    capsys.readouterr()
    import re

    trace = _trace_text(report)
    venv = re.search(r"venv=(\S+?)\\n", trace)
    assert venv is not None, trace[-3000:]
    assert Path(venv.group(1)).parent.parent == cache / "runs"  # outside the workspace, made for this task
    assert f"path={venv.group(1)}/bin:" in trace  # first on PATH


def _sandbox_shows_the_venv(tiny, tmp_path: Path) -> bool:
    """Whether a command in the sandbox runs the venv's Python with its own prefix (the sandbox binds the user's
    venv), probed through `cli-agent tools run run_command` as the task's run would see it."""
    import os
    import sys

    _, tasks, cache = tiny
    prepared = prepare(tasks[0], tmp_path / "probe", cache)
    env = dict(os.environ, PATH=f"{prepared.venv}/bin:{os.environ['PATH']}", VIRTUAL_ENV=str(prepared.venv))
    probe = json.dumps({"command": "python -c 'import sys; print(sys.prefix)'"})
    done = subprocess.run([sys.executable, "-m", "cli_agent", "-C", str(prepared.workspace), "--yes", "tools", "run",
                           "run_command", probe], env=env, capture_output=True, text=True, timeout=120)
    return f'"{prepared.venv}\\n' in done.stdout


@pytest.mark.slow
def test_the_reference_fix_played_by_a_scripted_model_ends_verified(tiny, tmp_path, capsys):
    """The harness's own verdict with the project's venv outside the workspace: its tests run in the sandbox with
    the venv's pytest and pass: the sandbox shows the user's venv, with its own prefix."""
    assert _sandbox_shows_the_venv(tiny, tmp_path), "the command sandbox hides the venv outside the workspace"
    suite, _, _ = tiny
    script = tmp_path / "fix.json"
    script.write_text(json.dumps(FIX_ADD))
    report = tmp_path / "report.json"
    code = cli_run(["eval", "--suite", "real", "--tasks", str(suite), "--only", "tiny-add", "--model",
                    f"scripted:{script}", "--protocols", "native", "--report", str(report)])
    assert code == 0, capsys.readouterr().out
    (row,) = json.loads(report.read_text())["results"]
    assert row["passed"] and row["verified"] is True and row["exit_code"] == 0


def test_the_summary_counts_pass_at_1_pass_at_n_and_runs_done_with_the_tests_failing():
    from cli_agent.eval.real import RealResult
    from cli_agent.eval.real_report import summary

    def result(passed: bool, exit_code: int, attempt: int) -> RealResult:
        return RealResult("t", "bug", "json", "all", passed=passed, exit_code=exit_code, attempt=attempt)

    rows = [result(True, 0, 0), result(True, 0, 2), result(False, 8, 0), result(False, 0, 0)]
    (line,) = summary(rows, attempts=3)
    assert "2/4 passed (pass@1 1/4, pass@3 2/4; done with the tests failing: 1)" in line
    (line,) = summary(rows[:1], attempts=1)
    assert "1/1 passed (pass@1 1/1; done with the tests failing: 0)" in line
    assert rows[3].to_dict()["done_failing"] is True and rows[2].to_dict()["done_failing"] is False


def test_the_documented_matrix_workflow_runs_every_shard_and_merges_them_all():
    import re

    import yaml

    docs = (REPO / "docs" / "verify.md").read_text(encoding="utf-8")
    (block,) = re.findall(r"```yaml\n(name: real-suite\n.*?)```", docs, re.S)
    workflow = yaml.safe_load(block)
    shards = workflow["jobs"]["shard"]["strategy"]["matrix"]["shard"]
    runs = " ".join(step.get("run", "") for step in workflow["jobs"]["shard"]["steps"])
    assert f"--shard ${{{{ matrix.shard }}}}/{len(shards)}" in runs and shards == list(range(1, len(shards) + 1))
    merge = " ".join(step.get("run", "") for step in workflow["jobs"]["merge"]["steps"])
    assert workflow["jobs"]["merge"]["needs"] == "shard"
    assert all(f"--merge shards/shard-{i}.json" in merge for i in shards)


@pytest.mark.slow
def test_a_release_pip_cannot_fetch_ends_the_suite_before_any_model_runs(tiny, tmp_path, capsys):
    suite, _, _ = tiny
    missing = tmp_path / "missing.toml"
    missing.write_text(suite.read_text().replace('version = "1.0"', 'version = "9.9"').replace("tinycalc==1.0",
                                                                                               "tinycalc==9.9"))
    code = cli_run(["eval", "--suite", "real", "--tasks", str(missing), "--model", "scripted:/nonexistent.json"])
    captured = capsys.readouterr()
    assert code == 2 and "cannot fetch the sdist of tinycalc==9.9" in captured.err, captured
    assert "Traceback" not in captured.err and "task " not in captured.out

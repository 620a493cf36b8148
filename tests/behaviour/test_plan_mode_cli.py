"""Plan mode from the command line (`--mode plan`, the scripted model): only read-only tools are offered, so a write
the model tries is no tool at all; the plan (update_plan's checklist, then the answer) is printed; the run exits 0
with the files unchanged. Approving it is the next run in another mode (`-c --mode edits`), with the plan in its
conversation as the checklist."""

from __future__ import annotations

import json

import pytest
from clikit import cli, user_config

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]

PLAN = [{"step": "Set x to 2 in a.py", "status": "pending"}]


def _script(path, *replies, record=None):
    path.write_text(json.dumps({"replies": list(replies), **({"record": str(record)} if record else {})}))
    return f"scripted:{path}"


def test_plan_mode_offers_no_write_tool_prints_the_plan_and_changes_nothing(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "")
    (ws / "a.py").write_text("x = 1\n")
    script = _script(tmp_path / "s.json",
                     {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
                     {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 2\n"}},
                                     {"name": "run_command", "arguments": {"command": "touch b"}}]},
                     {"tool_calls": [{"name": "update_plan", "arguments": {"steps": PLAN}}]},
                     {"text": "I will set x to 2."})
    done = cli(["-C", str(ws), "-p", "make x 2", "--model", script, "--mode", "plan", "--yes"], home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Plan:\n  1. Set x to 2 in a.py\n\nI will set x to 2.\n"
    assert (ws / "a.py").read_text() == "x = 1\n" and sorted(p.name for p in ws.iterdir()) == ["a.py"]
    report = cli(["-C", str(ws), "-p", "make x 2", "--model", script, "-o", "json"], home=home,
                 env_extra={"CLI_AGENT_MODE": "plan"})
    calls = json.loads(report.stdout)["tool_calls"]
    refused = calls[1]["errors"][0]
    assert refused.startswith("unknown tool 'write_file'") and "read_file" in refused
    assert not any(name in refused.split("Available tools:")[1] for name in ("write_file", "edit_file", "run_command",
                                                                             "task"))
    assert json.loads(report.stdout)["plan"] == PLAN and (ws / "a.py").read_text() == "x = 1\n"


def test_approving_the_plan_runs_it_in_the_mode_chosen(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "")
    (ws / "a.py").write_text("x = 1\n")
    planned = _script(tmp_path / "p.json", {"tool_calls": [{"name": "update_plan", "arguments": {"steps": PLAN}}]},
                      {"text": "I will set x to 2."})
    assert cli(["-C", str(ws), "-p", "make x 2", "--model", planned, "--mode", "plan"], home=home).returncode == 0
    record = tmp_path / "requests.jsonl"
    go = _script(tmp_path / "g.json",
                 {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 2\n"}}]},
                 {"text": "done"}, record=record)
    done = cli(["-C", str(ws), "-c", "-p", "go ahead", "--model", go, "--mode", "edits"], home=home)
    assert done.returncode == 0, done.stderr
    assert (ws / "a.py").read_text() == "x = 2\n"
    first = record.read_text().splitlines()[0]
    assert "Set x to 2 in a.py" in first and "I will set x to 2." in first  # the plan is the run's checklist


def test_an_untrusted_projects_mode_plan_reaches_the_headless_printer(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "")
    (ws / "a.py").write_text("x = 1\n")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text('mode = "plan"\n')  # narrower than the default: kept untrusted
    script = _script(tmp_path / "s.json",
                     {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.py", "content": "x = 2\n"}}]},
                     {"tool_calls": [{"name": "update_plan", "arguments": {"steps": PLAN}}]},
                     {"text": "I will set x to 2."})
    done = cli(["-C", str(ws), "-p", "make x 2", "--model", script, "--yes"], home=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Plan:\n  1. Set x to 2 in a.py\n\nI will set x to 2.\n"
    assert (ws / "a.py").read_text() == "x = 1\n"

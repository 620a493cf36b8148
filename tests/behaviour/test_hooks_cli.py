"""Hooks from the command line, as real commands: the user's config runs them; a project's runs them only in a
trusted folder (elsewhere they are named once and not run); a hook that hangs is killed at its timeout and the
run goes on."""

from __future__ import annotations

import json

import pytest
from clikit import cli, user_config

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


def _script(path, *replies):
    path.write_text(json.dumps(list(replies)))
    return f"scripted:{path}"


def _create(path="a.txt"):
    return {"tool_calls": [{"name": "create_file", "arguments": {"path": path, "content": "hello\n"}}]}


def test_a_user_hook_runs_after_an_edit_and_is_in_the_report_and_trace(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, f'[[hooks]]\nevent = "after_tool"\nmatch = "create_file"\n'
                      f'command = "cat > {tmp_path}/seen.json; echo formatted"\n')
    done = cli(["-C", str(ws), "-p", "make a", "--model", _script(tmp_path / "s.json", _create(), {"text": "ok"}),
                "--yes", "--output", "stream-json"], home=home)
    assert done.returncode == 0, done.stderr
    ran = [e for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "hook_ran"]
    assert [(r["event"], r["exit_code"], r["stdout"].strip(), r["tool"]) for r in ran] == [
        ("after_tool", 0, "formatted", "create_file")]
    seen = json.loads((tmp_path / "seen.json").read_text())
    assert seen["tool_input"] == {"path": "a.txt", "content": "hello\n"} and seen["tool_response"]["ok"] is True


def test_an_untrusted_projects_hooks_are_named_once_and_not_run(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "")
    marker = ws / "pwned"  # in the workspace: a project's hook runs in the command sandbox, which writes only there
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text(
        f'[[hooks]]\nevent = "prompt"\ncommand = "touch {marker}"\n\n'
        f'[[hooks]]\nevent = "before_tool"\ncommand = "touch {marker}; exit 2"\n')
    script = _script(tmp_path / "s.json", _create(), {"text": "ok"})
    done = cli(["-C", str(ws), "-p", "make a", "--model", script, "--yes", "--output", "json"], home=home)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and not marker.exists() and (ws / "a.txt").exists()
    named = [n for n in report["notes"] if "hook" in n]
    assert len(named) == 1 and "not running the 2 hook(s)" in named[0] and f"touch {marker}" in named[0]
    trusted = cli(["-C", str(ws), "-p", "make b", "--model", _script(tmp_path / "t.json", _create("b.txt"),
                                                                       {"text": "ok"}),
                   "--yes", "--trust", "--output", "json"], home=home)
    assert marker.exists() and not (ws / "b.txt").exists()  # trusted: they run, and the second one blocks
    assert "blocked by a before_tool hook" in json.dumps(json.loads(trusted.stdout)["tool_calls"])


def test_a_hook_that_hangs_is_killed_at_its_timeout_and_the_run_goes_on(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, '[[hooks]]\nevent = "before_tool"\ncommand = "sleep 600"\ntimeout_s = 1\n')
    done = cli(["-C", str(ws), "-p", "make a", "--model", _script(tmp_path / "s.json", _create(), {"text": "ok"}),
                "--yes", "--output", "stream-json"], home=home, timeout=120)
    assert done.returncode == 0, done.stderr
    ran = [e for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "hook_ran"]
    assert ran[0]["timed_out"] is True and ran[0]["exit_code"] is None and not ran[0]["blocked"]
    assert (ws / "a.txt").exists()


def test_a_bad_hook_in_the_user_config_is_a_config_error(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, '[[hooks]]\nevent = "before_everything"\ncommand = "true"\n')
    done = cli(["-C", str(ws), "-p", "x", "--model", "scripted:/nonexistent"], home=home)
    assert done.returncode == 2 and "hooks" in done.stderr and "Traceback" not in done.stderr


def test_a_call_a_before_tool_hook_blocks_does_not_fail_the_work_before_it(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, '[[hooks]]\nevent = "before_tool"\nmatch = "run_command"\n'
                      'command = "grep -q \'rm \' && { echo no rm here >&2; exit 2; } || exit 0"\n')
    remove = {"tool_calls": [{"name": "run_command", "arguments": {"command": "rm -rf build && true"}}]}
    done = cli(["-C", str(ws), "-p", "make a", "--model", _script(tmp_path / "s.json", _create(), remove,
                                                                   {"text": "made a.txt"}),
                "--yes", "--output", "json"], home=home)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["status"] == "done", done.stdout
    assert (ws / "a.txt").exists() and "blocked by a before_tool hook: no rm here" in json.dumps(report["tool_calls"])


def test_a_file_name_that_is_not_utf8_reaches_an_after_tool_hook_as_json(tmp_path, ws):
    home = tmp_path / "home"
    (ws / "caf\udce9.txt").write_text("x")  # the bytes caf\xe9.txt: Latin-1, not UTF-8
    user_config(home, f'[[hooks]]\nevent = "after_tool"\ncommand = "cat > {tmp_path}/seen.json"\n')
    listing = {"tool_calls": [{"name": "list_files", "arguments": {}}]}
    done = cli(["-C", str(ws), "-p", "list", "--model", _script(tmp_path / "s.json", listing, {"text": "ok"}),
                "--output", "json"], home=home)
    assert done.returncode == 0, done.stderr
    seen = json.loads((tmp_path / "seen.json").read_bytes())  # valid JSON, whatever the names
    assert "caf\udce9.txt" in json.dumps(seen["tool_response"], ensure_ascii=False)


def test_a_hook_whose_daemon_keeps_its_output_open_does_not_hold_the_run(tmp_path, ws):
    import subprocess
    import time
    home = tmp_path / "home"
    user_config(home, '[[hooks]]\nevent = "before_tool"\ncommand = "setsid sleep 3274 & sleep 1"\n')
    started = time.monotonic()
    done = cli(["-C", str(ws), "-p", "make a", "--model", _script(tmp_path / "s.json", _create(), {"text": "ok"}),
                "--yes", "--output", "json", "--timeout", "20"], home=home, timeout=60)
    assert done.returncode == 0 and time.monotonic() - started < 15, done.stderr
    listing = subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True, check=True).stdout
    assert "sleep 3274" not in listing  # what the hook started is gone with it


def test_the_stop_hook_runs_once_the_run_is_over_after_its_verification(tmp_path, ws):
    import sys

    home = tmp_path / "home"
    pytest_cmd = f"{sys.executable} -m pytest -q -p no:cacheprovider"
    user_config(home, f'test_command = {json.dumps(pytest_cmd)}\n[[hooks]]\nevent = "stop"\ncommand = "echo over"\n')
    (ws / "stats.py").write_text("def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    (ws / "test_stats.py").write_text("from stats import mean\n\n\ndef test_m():\n    assert mean([1, 2, 3]) == 2\n")
    fix = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "stats.py", "old": "(len(xs) + 1)",
                                                              "new": "len(xs)"}}]}
    miss = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "stats.py", "old": "nothere", "new": "x"}}]}
    done = cli(["-C", str(ws), "-p", "fix mean", "--model", _script(tmp_path / "s.json", fix, miss, {"text": "ok"}),
                "--yes", "--output", "stream-json"], home=home, timeout=120)
    kinds = [e["type"] for e in map(json.loads, done.stdout.splitlines()) if e["type"] in ("verification", "hook_ran")]
    assert kinds == ["verification", "verification", "hook_ran"], kinds


def test_a_projects_hook_runs_in_the_command_sandbox_and_cannot_read_home_as_a_users_hook_can(tmp_path, ws):
    home, user_home = tmp_path / "home", tmp_path / "me"
    (user_home / ".ssh").mkdir(parents=True)
    (user_home / ".ssh" / "id_rsa").write_text("SECRET-KEY\n")
    read = "cat ~/.ssh/id_rsa || echo could not read it"
    user_config(home, f'[[hooks]]\nevent = "prompt"\ncommand = "{read}"\n')
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text(
        f'[[hooks]]\nevent = "prompt"\ncommand = "{read}"\nsandboxed = false\n\n'  # a project cannot opt out
        '[[hooks]]\nevent = "after_tool"\ncommand = "echo formatted > fmt.txt"\n')
    done = cli(["-C", str(ws), "-p", "make a", "--model", _script(tmp_path / "s.json", _create(), {"text": "ok"}),
                "--yes", "--trust", "--output", "stream-json"], home=home, env_extra={"HOME": str(user_home)})
    assert done.returncode == 0, done.stderr
    ran = [e for e in map(json.loads, done.stdout.splitlines()) if e["type"] == "hook_ran"]
    user, project = (r for r in ran if r["event"] == "prompt")
    assert "SECRET-KEY" in user["stdout"]  # the user's own hook: the user's own command
    assert "SECRET-KEY" not in project["stdout"] and "could not read it" in project["stdout"]
    assert (ws / "fmt.txt").read_text() == "formatted\n"  # what it writes in the workspace is applied

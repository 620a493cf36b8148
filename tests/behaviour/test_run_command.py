"""run_command end to end, through the real CLI, the real sandbox and the undo journal: a command's change set is
approved, applied and undone byte for byte; denied, it leaves the workspace byte-identical; a run that only writes
caches asks nothing; without a sandbox the tool is not offered."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import cli, reaped

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


def script(tmp_path: Path, *commands: str, answer: str = "done") -> str:
    replies: list[dict[str, object]] = [
        {"tool_calls": [{"name": "run_command", "arguments": {"command": c}}]} for c in commands]
    replies.append({"text": answer})
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_bytes(b"print('old')\n")
    (root / "notes.txt").write_bytes(b"keep\r\nme\n")
    (root / "old_name.txt").write_bytes(b"\x00binary\xff")
    (root / "run.sh").write_bytes(b"echo hi\n")
    (root / "gone.txt").write_bytes(b"delete me\n")
    (root / ".gitignore").write_text("build/\n")
    return root


EDIT_ALL = ("echo \"print('new')\" > src/app.py; printf 'fresh\\n' > new.txt; rm gone.txt; "
            "mv old_name.txt new_name.txt; chmod +x run.sh; mkdir -p build __pycache__; echo o > build/out.o; "
            "echo c > __pycache__/m.pyc; echo ran")


@pytest.mark.slow
def test_a_command_change_set_is_approved_applied_and_undone_byte_for_byte(ws: Path, tmp_path: Path,
                                                                            snapshot) -> None:
    home = tmp_path / "home"
    before = snapshot(ws)
    done = cli(["-p", "go", "--model", script(tmp_path, EDIT_ALL), "-C", str(ws), "--yes", "--output", "json"],
               home=home)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (ws / "src" / "app.py").read_bytes() == b"print('new')\n"
    assert (ws / "new.txt").read_bytes() == b"fresh\n" and not (ws / "gone.txt").exists()
    assert (ws / "new_name.txt").read_bytes() == b"\x00binary\xff" and not (ws / "old_name.txt").exists()
    assert os.stat(ws / "run.sh").st_mode & 0o111
    assert not (ws / "build").exists() and not (ws / "__pycache__").exists()  # ignored: left out
    assert sorted(report["files_changed"]) == ["gone.txt", "new.txt", "new_name.txt", "old_name.txt", "run.sh",
                                               "src/app.py"]
    undone = cli(["undo", "-C", str(ws)], home=home)
    assert undone.returncode == 0, undone.stderr
    assert snapshot(ws) == before


@pytest.mark.slow
def test_the_change_set_and_the_command_reach_the_trace_and_the_model(ws: Path, tmp_path: Path) -> None:
    home, trace = tmp_path / "home", tmp_path / "trace.jsonl"
    done = cli(["-p", "go", "--model", script(tmp_path, EDIT_ALL), "-C", str(ws), "--yes", "--trace", str(trace)],
               home=home)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    result = next(e for e in events if e["type"] == "tool_result" and e["tool"] == "run_command")
    data = result["envelope"]["data"]
    assert data["exit_code"] == 0 and data["timed_out"] is False and "ran" in data["output"]
    assert data["output_bytes"] == 4 and data["sandboxed"] is True
    changes = data["changes"]
    assert (changes["created"], changes["edited"], changes["deleted"], changes["renamed"],
            changes["mode_changed"]) == (1, 1, 1, 1, 1)
    assert changes["ignored"] == 2 and changes["renames"] == [["old_name.txt", "new_name.txt"]]
    assert {c["path"] for c in result["changes"]} == {"src/app.py", "new.txt", "gone.txt", "old_name.txt",
                                                      "new_name.txt", "run.sh"}


@pytest.mark.slow
def test_headless_without_yes_denies_the_change_set_and_leaves_the_workspace_byte_identical(
        ws: Path, tmp_path: Path, snapshot) -> None:
    before = snapshot(ws)
    done = cli(["-p", "go", "--model", script(tmp_path, EDIT_ALL), "-C", str(ws), "--output", "json"],
               home=tmp_path / "home")
    assert done.returncode == 3, done.stderr
    assert snapshot(ws) == before
    report = json.loads(done.stdout)
    assert report["status"] == "denied" or report["exit_code"] == 3
    assert "--yes" in done.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_a_command_that_writes_only_caches_asks_nothing(ws: Path, tmp_path: Path, snapshot) -> None:
    (ws / "test_x.py").write_text("def test_one():\n    assert 1 + 1 == 2\n")
    before = snapshot(ws)
    done = cli(["-p", "go", "--model", script(tmp_path, f"{sys.executable} -m pytest -q -p no:randomly test_x.py"),
                "-C", str(ws), "--output", "json"], home=tmp_path / "home")
    assert done.returncode == 0, done.stderr  # no --yes, headless, and yet nothing was denied
    assert snapshot(ws) == before
    report = json.loads(done.stdout)
    assert report["files_changed"] == []


@pytest.mark.slow
def test_without_a_sandbox_run_command_is_not_offered(ws: Path, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"CLI_AGENT_BWRAP": ""}  # no bubblewrap at all: one missing capability
    prompt = cli(["prompt", "--json", "-C", str(ws), "--model", script(tmp_path)], home=home, env_extra=env)
    assert prompt.returncode == 0, prompt.stderr
    names = [s["function"]["name"] if "function" in s else s["name"] for s in json.loads(prompt.stdout)["tools"]]
    assert "run_command" not in names and "read_file" in names
    done = cli(["-p", "go", "--model", script(tmp_path, "echo hi"), "-C", str(ws), "--yes", "--output", "json"],
               home=home, env_extra=env)
    report = json.loads(done.stdout)
    assert report["tool_calls"][0]["ok"] is False  # the model asked anyway: an unknown tool, nothing ran
    status = cli(["sandbox"], home=home, env_extra=env)
    assert status.returncode == 1 and "not available" in status.stdout and "bubblewrap" in status.stdout


@pytest.mark.slow
def test_a_lost_capability_is_found_by_the_probe_and_named(ws: Path, tmp_path: Path) -> None:
    """User namespaces switched off (in a user namespace of its own, as a container would have them)."""
    code = ("echo 0 > /proc/sys/user/max_user_namespaces && "
            f"{sys.executable} -m cli_agent sandbox")
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"CLI_AGENT_HOME": str(tmp_path)}
    done = subprocess.run(["unshare", "--user", "--map-root-user", "sh", "-c", code], capture_output=True, text=True,
                          env=env, timeout=60)
    assert done.returncode == 1, done.stderr
    assert "not available" in done.stdout and "namespace" in done.stdout


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code"), [(2, 130), (15, 143)])
def test_ctrl_c_or_sigterm_mid_command_applies_nothing_and_leaves_no_process(ws: Path, tmp_path: Path,
                                                                           snapshot, signum: int, code: int) -> None:
    import time

    from sandboxkit import processes_matching

    tag = f"{signum}{os.getpid() % 10000:04d}"
    before = snapshot(ws)
    trace = tmp_path / "trace.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    command = f"echo new > made.txt; rm gone.txt; (setsid sleep 3{tag} &); echo RUNNING; sleep 4{tag}"
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "-p", "go", "--model", script(tmp_path, command),
                             "-C", str(ws), "--yes", "--trace", str(trace)], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    with reaped(proc):  # the output comes before its `sleep` starts: wait for both (a busy machine widens the gap)
        while ("command_output" not in (trace.read_text() if trace.exists() else "")
               or not processes_matching(f"sleep 4{tag}")):
            assert time.monotonic() < deadline and proc.poll() is None, "the command never started"
            time.sleep(0.05)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert snapshot(ws) == before
    left = time.monotonic() + 10  # the sandbox's kill is reaped at once; a busy machine may take a moment to show it
    while (processes_matching(f"sleep 3{tag}") or processes_matching(f"sleep 4{tag}")) and time.monotonic() < left:
        time.sleep(0.05)
    assert processes_matching(f"sleep 3{tag}") == [] and processes_matching(f"sleep 4{tag}") == []


PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
FIX_SCRIPT = [
    {"tool_calls": [{"name": "run_command", "arguments": {"command": PYTEST}}]},
    {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]},
    {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]},
    {"tool_calls": [{"name": "run_command", "arguments": {"command": PYTEST}}]},
    {"text": "Fixed: add() subtracted; the tests pass now."},
]


@pytest.mark.slow
@pytest.mark.parametrize("how", ["prompt", "workflow"])
def test_fix_the_failing_test_then_undo_it_all(tmp_path: Path, snapshot, how: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    before = snapshot(ws)
    path = tmp_path / "fix.json"
    path.write_text(json.dumps(FIX_SCRIPT))
    trace = tmp_path / "trace.jsonl"
    args = (["-p", "fix the failing test"] if how == "prompt" else ["workflow", "run", "fix-tests"])
    common = ["--model", f"scripted:{path}", "-C", str(ws), "--trace", str(trace)]
    done = cli([*common, *args], home=home)
    assert done.returncode == 3, done.stderr  # the edit needs approval: headless without --yes, denied
    assert snapshot(ws) == before
    done = cli([*common, "--yes", *args], home=home)
    assert done.returncode == 0, done.stderr
    runs = [json.loads(line) for line in trace.read_text().splitlines()]
    exits = [r["envelope"]["data"]["exit_code"] for r in runs if r["type"] == "tool_result"
             and r["tool"] == "run_command"]
    assert exits[-2:] == [1, 0]
    assert "a + b" in (ws / "calc.py").read_text()
    assert not (ws / "__pycache__").exists()  # the test runs' caches stayed in their staging layers
    assert cli(["undo", "-C", str(ws)], home=home).returncode == 0
    assert snapshot(ws) == before


@pytest.mark.slow
def test_the_prompt_asks_for_the_tests_when_a_test_command_is_known(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / "tests").mkdir(parents=True)
    (ws / "tests" / "test_a.py").write_text("def test_a():\n    pass\n")
    shown = cli(["prompt", "-C", str(ws), "--model", script(tmp_path)], home=home)
    assert "run the tests with run_command" in shown.stdout and "pytest -q" in shown.stdout
    (home / "config").mkdir(parents=True)
    (home / "config" / "config.toml").write_text('test_command = "make check"\n')
    shown = cli(["prompt", "-C", str(ws), "--model", script(tmp_path)], home=home)
    assert "`make check`" in shown.stdout
    shown = cli(["prompt", "-C", str(ws), "--model", script(tmp_path)], home=home, env_extra={"CLI_AGENT_BWRAP": ""})
    assert "run the tests with run_command" not in shown.stdout  # no run_command, no promise to run anything

"""Background processes through the real CLI and sandbox: a server started with `background`, its output read and
stopped; no process of the session outlives it (after the run, after SIGTERM, after SIGKILL of cli-agent itself);
its file changes asked for once it has ended, never applied unasked."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from sandboxkit import processes_matching

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def argv(tmp_path: Path, ws: Path, calls: list[dict[str, Any]], *flags: str) -> tuple[list[str], dict[str, str]]:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*({"tool_calls": [call]} for call in calls), {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}
    return [sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-C", str(ws),
            "--output", "json", *flags], env


def run(tmp_path: Path, ws: Path, calls: list[dict[str, Any]], *flags: str) -> tuple[int, dict[str, Any]]:
    command, env = argv(tmp_path, ws, calls, *flags)
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode, json.loads(done.stdout) if done.stdout.strip() else {"stderr": done.stderr}


def results(tmp_path: Path) -> list[dict[str, Any]]:
    out = []
    for path in (tmp_path / "home").rglob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out += [r["envelope"] for r in records if r.get("type") == "tool_result"]
    return out


def bg(command: str) -> dict[str, Any]:
    return {"name": "run_command", "arguments": {"command": command, "background": True}}


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


def test_a_background_server_is_read_and_stopped_and_nothing_of_it_remains(tmp_path: Path, ws: Path) -> None:
    mark = uuid.uuid4().hex[:10]
    (ws / "index.html").write_text("hello\n")
    code, out = run(tmp_path, ws, [bg(f"python3 -m http.server 8123 --bind 127.0.0.1 # {mark}"),
                                   call("process_output", process=1), call("stop_process", process=1)], "--yes")
    assert code == 0, out
    started, read, stopped = results(tmp_path)
    assert started["data"]["process"] == 1 and started["data"]["running"] is True
    assert "Serving HTTP on 127.0.0.1 port 8123" in started["data"]["output"]  # the first output, at once
    assert read["data"]["running"] is True and read["data"]["output"] == ""  # nothing new since
    assert stopped["data"]["running"] is False and stopped["data"]["exit_code"] is not None
    assert stopped["data"]["changes"]["summary"] == "no file changes"
    assert processes_matching(mark) == []


def test_a_later_command_reaches_a_background_server(tmp_path: Path, ws: Path) -> None:
    (ws / "index.html").write_text("served from the background\n")
    fetch = "import urllib.request as u; print(u.urlopen('http://127.0.0.1:8124/index.html').read().decode())"
    code, out = run(tmp_path, ws, [bg("python3 -m http.server 8124 --bind 127.0.0.1"),
                                   call("run_command", command=f'python3 -c "{fetch}"'),
                                   call("stop_process", process=1)], "--yes")
    assert code == 0, out
    assert "served from the background" in results(tmp_path)[1]["data"]["output"]


def test_the_session_ending_leaves_no_process_even_one_it_started_in_the_background(tmp_path: Path,
                                                                                      ws: Path) -> None:
    mark = uuid.uuid4().hex[:10]
    code, out = run(tmp_path, ws, [bg(f"(sleep 300 # {mark}\n) & setsid sleep 301 # {mark}")])
    assert code == 0, out
    assert processes_matching(mark) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL], ids=["sigterm", "sigkill"])
def test_no_process_outlives_cli_agent_terminated_or_killed(tmp_path: Path, ws: Path, sig: signal.Signals) -> None:
    mark = f"300.{uuid.uuid4().int % 10**9:09d}"  # `sleep 300.NNN`: its own command line, once it runs
    command, env = argv(tmp_path, ws, [bg(f"sleep {mark}"), call("run_command", command="sleep 60")])
    temp = tmp_path / "temp"  # where the session's own folders go: its network holder and stagings name it
    temp.mkdir()
    env["TMPDIR"] = str(temp)
    agent = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def sleeping() -> bool:  # the command itself runs (bwrap has set the sandbox up)
        return any(Path(f"/proc/{pid}/cmdline").read_bytes().startswith(b"sleep\0")
                   for pid in processes_matching(f"sleep {mark}") if Path(f"/proc/{pid}").exists())
    try:
        deadline = time.monotonic() + 30
        while not sleeping() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert processes_matching(mark), "the background process never started"
        agent.send_signal(sig)
        agent.wait(timeout=30)
    finally:
        agent.kill()
    deadline = time.monotonic() + 5  # a SIGKILL leaves it to the parent-death signal: the kernel's, at once
    while (processes_matching(mark) or processes_matching(str(temp))) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert processes_matching(mark) == []
    assert processes_matching(str(temp)) == []  # the holder of the session's network namespace too


def test_its_file_changes_are_asked_for_once_it_ended_and_never_applied_unasked(tmp_path: Path, ws: Path) -> None:
    code, out = run(tmp_path, ws, [bg("echo made > made.txt; sleep 30"), call("stop_process", process=1)])
    assert code == 3 and out["status"] == "denied"  # no one to ask: the change set is refused, not applied
    assert "made.txt" in out["message"] and "--yes" in out["message"]
    assert not (ws / "made.txt").exists()

    code, out = run(tmp_path, ws, [bg("echo started; echo made > made.txt; sleep 1"),
                                   call("run_command", command="sleep 1.5"),
                                   call("process_output", process=1)], "--yes")
    assert code == 0, out
    assert out["files_changed"] == ["made.txt"] and (ws / "made.txt").read_text() == "made\n"

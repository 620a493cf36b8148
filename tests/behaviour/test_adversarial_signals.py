"""Adversarial signals: SIGINT and SIGTERM of a real one-shot process while it waits for the model, while it asks
for approval (in a pseudo-terminal), and in the middle of a large write. Every file is old or new, the trace is
complete (it ends with run_finished and reads back), the journal consistent, and the exit code 130 or 143."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_agent.fs.atomic import TEMP_PREFIX
from cli_agent.history.journal import Journal
from cli_agent.history.trace import read_trace
from cli_agent.history.undo import undo_turn

SIGNALS = [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")]
MID_WRITE_RUNS = int(os.environ.get("CLI_AGENT_KILLS", "8")) // 2


def env_for(home: Path, *, terminal: bool = False) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k != "CI"}
    env |= {"CLI_AGENT_HOME": str(home), "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return env | ({"TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"} if terminal else {"CI": "true"})


def events(trace: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in trace.read_text().splitlines()] if trace.exists() else []


def wait_for(predicate: object, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():  # type: ignore[operator]
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.002)


def check_trace(trace: Path, stop_reason: str) -> None:
    read = read_trace(trace)  # strict: a trace without its run_finished is a TraceError
    finished = events(trace)[-1]
    assert finished["type"] == "run_finished" and finished["stop_reason"] == stop_reason, finished
    assert read is not None


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code", "reason"), SIGNALS)
def test_a_signal_during_the_model_wait(tmp_path: Path, signum: int, code: int, reason: str) -> None:
    ws, home, trace = tmp_path / "ws", tmp_path / "home", tmp_path / "trace.jsonl"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}}]},
        {"delay": 120, "text": "too late"}]))
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-y",
                             "-C", str(ws), "--trace", str(trace)], env=env_for(home), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    wait_for(lambda: sum(e["type"] == "model_request" for e in events(trace)) == 2)
    time.sleep(0.2)
    proc.send_signal(signum)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == code, err
    assert err.splitlines()[-1].startswith("cli-agent: ") and reason in err.splitlines()[-1]
    check_trace(trace, reason)
    assert (ws / "a.txt").read_text() == "new\n"
    assert undo_turn(Journal(ws, home=home / "state" / "journal")).done == ("restored a.txt",)
    assert (ws / "a.txt").read_text() == "old\n"


def _approval_run(tmp_path: Path, signum: int) -> tuple[int, Path, Path]:
    pexpect = pytest.importorskip("pexpect")
    ws, home, trace = tmp_path / "ws", tmp_path / "home", tmp_path / "trace.jsonl"
    ws.mkdir()
    (ws / "a.txt").write_text("old\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "new\n"}}]},
        {"text": "done"}]))
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-C",
                                           str(ws), "--trace", str(trace)], env=env_for(home, terminal=True),
                          dimensions=(40, 140), encoding="utf-8", timeout=120)
    child.expect(r"Apply\?")
    time.sleep(0.3)
    os.kill(child.pid, signum)
    child.expect(pexpect.EOF)
    child.close()
    return child.exitstatus, ws, trace


@pytest.mark.slow
def test_sigterm_during_approval(tmp_path: Path) -> None:
    code, ws, trace = _approval_run(tmp_path, signal.SIGTERM)
    assert code == 143
    check_trace(trace, "terminated")
    assert (ws / "a.txt").read_text() == "old\n"


@pytest.mark.slow
def test_sigint_during_approval(tmp_path: Path) -> None:
    code, ws, trace = _approval_run(tmp_path, signal.SIGINT)
    assert (ws / "a.txt").read_text() == "old\n"
    check_trace(trace, events(trace)[-1]["stop_reason"])  # type: ignore[arg-type]
    assert code == 130


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code", "reason"), SIGNALS)
def test_a_signal_in_the_middle_of_a_large_write(tmp_path: Path, signum: int, code: int, reason: str) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    old = b"old line\n" * 100_000
    new = "new line written by the agent, a long one\n" * 100_000  # 4.2 MB
    (ws / "big.txt").write_bytes(old)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "write_file", "arguments": {"path": "big.txt",
                                                                                       "content": new}}]},
                                  {"text": "done"}]))
    journal_home = home / "state" / "journal"
    rng = random.Random(int(signum))
    outcomes = {"old": 0, "new": 0, "finished_first": 0, "temp_file_left": 0}
    for n in range(MID_WRITE_RUNS):
        trace = tmp_path / f"trace{n}.jsonl"
        before = len(Journal(ws, home=journal_home).turns())
        proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}",
                                 "-y", "-C", str(ws), "--trace", str(trace)], env=env_for(home),
                                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        wait_for(lambda b=before, p=proc: p.poll() is not None or len(Journal(ws, home=journal_home).turns()) > b)
        time.sleep(rng.uniform(0, 0.03))
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
        data = (ws / "big.txt").read_bytes()
        assert data in (old, new.encode()), f"partial file: {len(data)} bytes"
        stray = [p for p in ws.iterdir() if p.name.startswith(TEMP_PREFIX)]
        outcomes["temp_file_left"] += len(stray)  # see test_a_signal_as_the_temp_file_is_created_leaves_no_file
        for p in stray:
            p.unlink()
        if proc.returncode == 0:
            outcomes["finished_first"] += 1
            check_trace(trace, "done")
        else:
            assert proc.returncode == code, err
            check_trace(trace, reason)
        outcomes["new" if data == new.encode() else "old"] += 1
        if data == new.encode():
            undo_turn(Journal(ws, home=journal_home))
        assert (ws / "big.txt").read_bytes() == old
    print(f"FIGURE {signal.Signals(signum).name} mid-write of a real -p run: {MID_WRITE_RUNS} runs {outcomes}")


def test_a_signal_as_the_temp_file_is_created_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools import ToolContext
    from cli_agent.tools.handlers import files

    (tmp_path / "a.txt").write_text("old\n")
    ws = Workspace(tmp_path)
    change = files.write_file(ToolContext(ws), "a.txt", "new\n")
    real_open = os.open

    def signalled(path, flags, mode=0o777, *, dir_fd=None):  # type: ignore[no-untyped-def]
        fd = real_open(path, flags, mode, dir_fd=dir_fd)
        if str(path).startswith(TEMP_PREFIX):
            raise KeyboardInterrupt  # the handler of a signal that arrived during the open() system call
        return fd

    monkeypatch.setattr(os, "open", signalled)
    with pytest.raises(KeyboardInterrupt):
        ws.apply(change)
    monkeypatch.undo()
    assert (tmp_path / "a.txt").read_text() == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.txt"]

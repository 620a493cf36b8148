"""The local model's server kept loaded between cli-agent processes ([local] keep_warm_s), with SmolLM2-135M: the
next process uses it, it ends by itself once idle, a process that finds it in use starts its own, another context
size replaces it, `cli-agent local stop` ends it, and under CI nothing is kept unless asked."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from localkit import alive, smollm2_missing, wait_for

from cli_agent.config.settings import LocalSettings
from cli_agent.providers.local.kept import KEEP_WARM_S, is_engine, keep_warm_seconds, read_record
from cli_agent.providers.local.provider import KEY_VARIABLES


def test_how_long_a_server_is_kept() -> None:
    assert keep_warm_seconds(LocalSettings(), {}) == KEEP_WARM_S == 300
    assert keep_warm_seconds(LocalSettings(), {"CI": "true"}) == 0  # a CI run stands alone
    assert keep_warm_seconds(LocalSettings(keep_warm_s=30), {"CI": "true"}) == 30  # unless it asks
    assert keep_warm_seconds(LocalSettings(keep_warm_s=0), {}) == 0


def run(home: Path, cwd: Path, *args: str, keep: str | None = "30", **extra: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k not in KEY_VARIABLES}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true", "CLI_AGENT_LOCAL_MODEL": "smollm2-135m",
            "CLI_AGENT_LOCAL_CONTEXT_SIZE": "4096", "CLI_AGENT_LOCAL_THREADS": "1"}
    env |= ({"CLI_AGENT_LOCAL_KEEP_WARM_S": keep} if keep else {}) | extra
    argv = list(args) or ["--model", "local", "-p", "Say hi.", "--max-steps", "1"]
    return subprocess.run([sys.executable, "-m", "cli_agent", *argv], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=180)


def ran(done: subprocess.CompletedProcess) -> bool:
    """It ran on the model: answered (0), or asked for a second step the step limit refused (4)."""
    return done.returncode in (0, 4)


def engines_of(home: Path) -> list[int]:
    """The local model servers whose command line names this home (its warm cache lives there)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes() if entry.name.isdigit() else b""
        except OSError:
            continue
        if b"cli_agent.providers.local.engine" in cmdline and str(home).encode() in cmdline:
            found.append(int(entry.name))
    return found


@pytest.fixture
def home(tmp_path):
    home = tmp_path / "home"
    yield home
    for pid in engines_of(home):  # whatever a failed test left
        os.kill(pid, 9)


def record_of(home: Path):
    return read_record(home / "state" / "local-server" / "server.json")


@pytest.mark.slow
@pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing()))
@pytest.mark.xdist_group("smollm2")
def test_the_next_process_uses_the_kept_server_and_it_ends_once_idle(home, tmp_path):
    first = run(home, tmp_path, keep="20")
    assert ran(first), first.stderr
    kept = record_of(home)
    assert kept is not None and is_engine(kept.pid)  # it outlived the process that started it
    second = run(home, tmp_path, keep="20")
    assert ran(second), second.stderr
    assert record_of(home) == kept and engines_of(home) == [kept.pid]  # the same server, and only it
    record = home / "state" / "local-server" / "server.json"
    os.utime(record, (time.time() - 60, time.time() - 60))  # last used a minute ago: past its 20 s
    wait_for(lambda: not alive(kept.pid), 40)  # looked at every 5 s
    assert record_of(home) is None


@pytest.mark.slow
@pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing()))
@pytest.mark.xdist_group("smollm2")
def test_a_kept_server_in_use_elsewhere_is_left_alone_and_this_process_starts_its_own(home, tmp_path):
    where = home / "state" / "local-server"
    where.mkdir(parents=True)
    with open(where / "lock", "ab") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another cli-agent uses the kept server
        done = run(home, tmp_path)
    assert ran(done), done.stderr
    assert record_of(home) is None and engines_of(home) == []  # its own server went with it


@pytest.mark.slow
@pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing()))
@pytest.mark.xdist_group("smollm2")
def test_another_context_size_replaces_the_kept_server_and_local_stop_ends_it(home, tmp_path):
    assert ran(run(home, tmp_path))
    before = record_of(home)
    assert before is not None
    other = run(home, tmp_path, CLI_AGENT_LOCAL_CONTEXT_SIZE="2048")
    assert ran(other), other.stderr
    after = record_of(home)
    assert after is not None and after.pid != before.pid and not alive(before.pid)
    stopped = run(home, tmp_path, "local", "stop")
    assert stopped.returncode == 0 and f"pid {after.pid}" in stopped.stdout
    assert not alive(after.pid) and record_of(home) is None
    again = run(home, tmp_path, "local", "stop")
    assert again.returncode == 0 and "no local model server is kept" in again.stdout


@pytest.mark.slow
@pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing()))
@pytest.mark.xdist_group("smollm2")
def test_under_ci_nothing_is_kept_unless_asked(home, tmp_path):
    done = run(home, tmp_path, keep=None)
    assert ran(done), done.stderr
    assert record_of(home) is None and engines_of(home) == []


@pytest.mark.slow
@pytest.mark.skipif(smollm2_missing() is not None, reason=str(smollm2_missing()))
@pytest.mark.xdist_group("smollm2")
def test_a_kept_server_whose_slot_holds_another_prompt_gets_the_saved_one_back(home, tmp_path):
    """The slot of a kept server holds whatever the last request left (a rewrite's prompt, another tool's): the next
    process restores the saved shared prefix all the same, so its first request is not evaluated whole."""
    import httpx

    assert ran(run(home, tmp_path))  # its slot is saved at exit
    kept = record_of(home)
    assert kept is not None
    other = {"model": "local", "max_tokens": 1, "id_slot": 0, "cache_prompt": True,
             "messages": [{"role": "system", "content": "Another prompt, unlike cli-agent's. " * 40},
                          {"role": "user", "content": "Hi."}]}
    httpx.post(f"http://127.0.0.1:{kept.port}/v1/chat/completions", json=other, timeout=60).raise_for_status()
    done = run(home, tmp_path, "--model", "local", "-p", "Say hi.", "--max-steps", "1", "--output", "json")
    assert ran(done), done.stderr
    assert record_of(home) == kept  # the same server
    assert json.loads(done.stdout)["usage"]["cached_tokens"] > 200

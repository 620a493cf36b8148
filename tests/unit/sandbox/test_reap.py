"""`kill_tree`: a command's whole tree dies, a child in a session of its own included, and the call returns once it has
(the sandbox's PID namespace, where a double fork stays below the command, is tests/behaviour/test_run_command.py)."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from cli_agent.sandbox.reap import descendants, kill_tree

pytestmark = pytest.mark.slow


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] not in "ZX"
    except OSError:
        return False


def _wait_for(predicate, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_tree_below_a_live_parent_dies_even_outside_its_group(tmp_path) -> None:
    """A child that made a session of its own, still below the command, is found in /proc and killed."""
    pids = tmp_path / "pids"
    proc = subprocess.Popen(["sh", "-c", f"setsid sh -c 'echo $$ > {pids}; exec sleep 300' & wait"],
                            start_new_session=True)
    try:
        _wait_for(lambda: pids.exists() and pids.read_text().strip().isdigit())
        child = int(pids.read_text())
        assert child in descendants(proc.pid) and os.getpgid(child) != proc.pid
        kill_tree(proc.pid)
        assert not _alive(child)  # gone when kill_tree returned, not a moment later
    finally:
        proc.kill()
        proc.wait()


def test_nothing_below_returns_at_once() -> None:
    proc = subprocess.Popen(["sleep", "300"], start_new_session=True)
    started = time.monotonic()
    kill_tree(proc.pid)
    assert proc.wait(timeout=5) == -9
    assert time.monotonic() - started < 2

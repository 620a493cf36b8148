"""Background processes in the real sandbox: the first output, output since the last read kept to a bound, at most
four at once, the whole tree ended by a stop, and the change set read back once it has ended, applied nowhere."""

from __future__ import annotations

import sys
import time
import uuid
from pathlib import Path

import pytest
from sandboxkit import processes_matching

from cli_agent.contracts import ToolError
from cli_agent.sandbox import Policy, Processes, probe
from cli_agent.sandbox.background import Ring

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


def table(ws: Path, max_running: int = 4) -> Processes:
    capability = probe()
    assert capability.available, capability.reason
    return Processes(capability, Policy(workspace=ws), max_running=max_running)


def drain(processes: Processes, number: int) -> None:
    for _ in processes.first_output(processes.get(number)):
        pass


def until(what, timeout: float = 10.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        got = what()
        if got:
            return got
        time.sleep(0.05)
    return what()


def test_the_ring_keeps_a_bound_and_counts_what_it_dropped() -> None:
    ring = Ring(size=10)
    ring.add(b"0123456789abcdef")
    assert ring.since_last() == ("6789abcdef", 6)
    ring.add(b"xy")
    assert ring.since_last() == ("xy", 0)
    assert ring.since_last() == ("", 0)
    ring.add(b"first\nlast line\n")
    assert ring.last_line() == "last line"


@pytest.mark.slow
def test_output_is_read_since_the_last_read_and_the_stop_ends_its_whole_tree(ws: Path) -> None:
    mark = uuid.uuid4().hex[:10]
    processes = table(ws)
    check = lambda rel, planned: None  # noqa: E731
    process = processes.start(f"echo start-{mark}; (sleep 300; echo {mark}) & sleep 301 # {mark}", check)
    drain(processes, process.number)
    first, _ = process.ring.since_last()
    assert f"start-{mark}" in first
    assert process.running and process.exit_code is None
    assert until(lambda: len(processes_matching(mark)) >= 2)  # the shell, its background child (and bwrap)
    stopped = processes.stop(process.number)
    assert not stopped.running and stopped.exit_code is not None
    assert processes_matching(mark) == []  # killed and waited for: nothing of it is left


@pytest.mark.slow
def test_at_most_four_run_at_once_and_the_refusal_says_so(ws: Path) -> None:
    processes = table(ws)
    check = lambda rel, planned: None  # noqa: E731
    try:
        for n in range(4):
            processes.start(f"sleep 30 # slot {n}", check)
        with pytest.raises(ToolError, match="4 background processes run already"):
            processes.start("sleep 30", check)
        processes.stop(2)
        processes.start("sleep 30 # slot again", check)  # a stopped one frees its place
    finally:
        assert processes.stop_all() == 4


@pytest.mark.slow
def test_its_change_set_is_read_back_once_it_ended_and_nothing_is_written(ws: Path) -> None:
    processes = table(ws)
    process = processes.start("echo made > made.txt", lambda rel, planned: None)
    assert until(lambda: not process.running)
    changes = process.settle()
    assert [c.path for c in changes.changes] == ["made.txt"] and changes.changes[0].after == b"made\n"
    assert not (ws / "made.txt").exists()
    assert not process.staging.exists()  # the staging layer went with the read

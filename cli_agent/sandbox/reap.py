"""Ending a command with everything it started, and waiting until it has gone.

Killing a command's process group is not enough on its own. A `setsid` or a double fork leaves the group; inside
the sandbox the PID namespace dies with bwrap, but the kernel tears it down after bwrap itself has been reaped, so
its processes can outlive cli-agent by a moment on a busy machine. `kill_tree` finds every descendant in /proc
(the processes of a PID namespace are descendants too), stops them so none forks while it is being killed, kills
them and the group, and returns once none is left alive (a zombie counts as gone), or after `wait_s`.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

_ROUNDS = 8  # stop descendants until no new one appears (each round may find the children of the last)


def _processes() -> dict[int, tuple[int, str, str]]:
    """Every process: pid -> (parent pid, state, start time)."""
    table: dict[int, tuple[int, str, str]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as stat:
                raw = stat.read().decode(errors="replace")
        except OSError:
            continue
        fields = raw[raw.rfind(")") + 2:].split()  # after "(comm) ": the name may hold spaces and parentheses
        if len(fields) > 19 and fields[1].isdigit():
            table[int(entry)] = (int(fields[1]), fields[0], fields[19])
    return table


def descendants(pid: int) -> dict[int, str]:
    """The processes below `pid`, each with its start time (so a reused pid is not mistaken for it)."""
    table = _processes()
    children: dict[int, list[int]] = {}
    for child, (parent, _, _) in table.items():
        children.setdefault(parent, []).append(child)
    found: dict[int, str] = {}
    todo = list(children.get(pid, ()))
    while todo:
        child = todo.pop()
        if child not in found:
            found[child] = table[child][2]
            todo.extend(children.get(child, ()))
    return found


def _signal(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, signum)


def kill_tree(pid: int, *, wait_s: float = 3.0) -> None:
    """SIGKILL `pid`'s process group and every process below it; return when they are gone or after `wait_s`."""
    doomed: dict[int, str] = {}
    for _ in range(_ROUNDS):
        new = {p: start for p, start in descendants(pid).items() if p not in doomed}
        if not new:
            break
        for p in new:
            _signal(p, signal.SIGSTOP)
        doomed |= new
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
    _signal(pid, signal.SIGKILL)
    for p in doomed:
        _signal(p, signal.SIGKILL)
    deadline = time.monotonic() + wait_s
    while doomed and time.monotonic() < deadline:
        table = _processes()
        doomed = {p: start for p, start in doomed.items()
                  if p in table and table[p][2] == start and table[p][1] not in "ZX"}
        if doomed:
            time.sleep(0.01)

"""The keeper of one hook's processes, run as its own small program (`python -I -S reaper.py SECONDS ARGV...`, no
cli_agent import): it makes itself a child subreaper (PR_SET_CHILD_SUBREAPER), so every process the hook starts,
`setsid` and double forks included, stays its descendant; it runs ARGV, waits for it at most SECONDS, then kills
every descendant left and reaps them before it exits with ARGV's exit code (124 when the time ran out). A SIGTERM,
or the death of cli-agent (PR_SET_PDEATHSIG), makes it do the same at once. When it has exited, nothing the hook
started is left, so nothing holds the hook's output pipes open."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
TIMED_OUT = 124


def _children(me: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if int(fields[1]) == me:
            found.append(int(name))
    return found


def sweep() -> None:
    """Kill every descendant (orphans come to us, the subreaper, as their parents die) and reap them."""
    me = os.getpid()
    for _ in range(10000):
        left = _children(me)
        if not left:
            return
        for pid in left:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        for _pid in left:
            try:
                os.waitpid(-1, 0)
            except ChildProcessError:
                break


def _on_term(_signum: int, _frame: object) -> None:
    sweep()
    os._exit(TIMED_OUT)


def main(argv: list[str]) -> int:
    import ctypes  # deferred: cli-agent imports this module for its path; only the keeper's own process needs ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    signal.signal(signal.SIGTERM, _on_term)
    if os.getppid() == 1:  # cli-agent died before the death signal was armed
        return TIMED_OUT
    deadline = time.monotonic() + float(argv[0])
    try:
        pid = os.posix_spawnp(argv[1], argv[1:], dict(os.environ))
    except OSError as exc:
        sys.stderr.write(f"the hook could not start: {exc.strerror or exc}\n")
        return 127
    code = TIMED_OUT
    signal.signal(signal.SIGALRM, _on_alarm)
    with contextlib.suppress(_TimeUp):
        signal.setitimer(signal.ITIMER_REAL, max(deadline - time.monotonic(), 0.001))
        _, status = os.waitpid(pid, 0)  # orphans that come to us are reaped by the sweep
        signal.setitimer(signal.ITIMER_REAL, 0)
        code = os.waitstatus_to_exitcode(status)
    sweep()
    return code if code >= 0 else 128 - code


class _TimeUp(Exception):
    pass


def _on_alarm(_signum: int, _frame: object) -> None:
    raise _TimeUp


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

"""Running a command: limits, a timeout, output capped head + tail in bounded memory, and no process left behind.

`run(argv, ...)` is a generator: it yields the output as it comes (for a live tail; an empty chunk every 0.1 s of
silence) and returns an `Outcome`. The
child starts in a session and process group of its own with stdin from /dev/null and stdout and stderr merged
into one pipe; as root it first joins a pids cgroup of its own (`pidlimit`). The shell the command runs in sets
the other limits (`runner.shell_argv`: processes, file size, the memory one process may allocate, core dumps). On
timeout, on an exception (Ctrl-C, SIGTERM) and when the generator is closed, the whole group is killed with
SIGKILL, with every process below it (`reap.kill_tree`), and the run returns once they are gone: inside the
sandbox that takes bwrap's PID namespace with it, and background jobs, `setsid` and double forks die too.
"""

from __future__ import annotations

import contextlib
import os
import select
import subprocess
import time
from collections import deque
from collections.abc import Generator, Mapping, Sequence

from cli_agent.contracts import dataclass
from cli_agent.sandbox.pidlimit import PidCgroup
from cli_agent.sandbox.reap import kill_tree

__all__ = ["Limits", "Outcome"]

_CHUNK = 1 << 16


def _memory_cap() -> int:
    """Half of this machine's memory, at least 1 GiB: a command allocating without end gets an allocation error
    (Python's MemoryError) there, before the machine runs out and its out-of-memory killer or swap takes over."""
    try:
        total = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 8 << 30
    return max(total // 2, 1 << 30)


MEMORY_CAP = _memory_cap()


@dataclass(frozen=True)
class Limits:
    timeout_s: float = 120.0
    max_processes: int = 512
    max_file_bytes: int = 1 << 30
    max_memory_bytes: int = MEMORY_CAP  # what one process may allocate (RLIMIT_DATA, `ulimit -d`)
    head_bytes: int = 4 * 1024  # output kept from the start
    tail_bytes: int = 12 * 1024  # and from the end


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None  # None when it was killed (timeout); a signal N shows as 128 + N
    duration_s: float
    output: str  # head, a note of what was left out, tail
    output_bytes: int  # everything the command printed
    timed_out: bool


class _Capped:
    """The first `head` bytes and the last `tail` bytes of a stream, whatever its length."""

    def __init__(self, head: int, tail: int) -> None:
        self.head, self.tail_cap = bytearray(), tail
        self.head_cap = head
        self.tail: deque[bytes] = deque()
        self.tail_size = 0
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_cap - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if not data:
            return
        self.tail.append(data[-self.tail_cap:])
        self.tail_size += len(self.tail[-1])
        while self.tail_size - len(self.tail[0]) >= self.tail_cap:
            self.tail_size -= len(self.tail.popleft())

    def text(self) -> str:
        tail = b"".join(self.tail)
        kept = len(self.head) + min(len(tail), self.tail_cap)
        left_out = self.total - kept
        tail = tail[-self.tail_cap:]
        if left_out <= 0:
            return (bytes(self.head) + tail).decode("utf-8", errors="replace")
        note = f"\n[... {left_out:,} bytes of output left out ...]\n"
        return bytes(self.head).decode("utf-8", errors="replace") + note + tail.decode("utf-8", errors="replace")


def run(argv: Sequence[str], env: Mapping[str, str], limits: Limits, cwd: str | None = None
        ) -> Generator[bytes, None, Outcome]:
    started = time.monotonic()
    deadline = started + limits.timeout_s
    captured = _Capped(limits.head_bytes, limits.tail_bytes)
    cgroup = PidCgroup.create(limits.max_processes)
    if cgroup is not None:  # a shell joins the cgroup, then becomes the command: no fork-time Python hook
        argv = ["/bin/sh", "-c", 'echo $$ > "$0" && exec "$@"', cgroup.procs, *argv]
    try:
        proc = subprocess.Popen(list(argv), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, env=dict(env), cwd=cwd, start_new_session=True,
                                close_fds=True)
    except BaseException:
        if cgroup is not None:
            cgroup.remove()
        raise
    assert proc.stdout is not None
    fd = proc.stdout.fileno()
    timed_out = False
    try:
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                timed_out = True
                break
            ready, _, _ = select.select([fd], [], [], min(remaining, 0.1))
            if not ready:
                if proc.poll() is not None:  # it ended, but something it started still holds the pipe
                    break
                yield b""  # a quiet tick: the consumer may show what it holds back
                continue
            data = os.read(fd, _CHUNK)
            if not data:
                break
            captured.add(data)
            yield data
    finally:
        if timed_out or proc.poll() is None:
            _kill(proc)
        proc.stdout.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if cgroup is not None:
            cgroup.remove()
    code = proc.returncode
    exit_code = None if timed_out else (128 - code if code is not None and code < 0 else code)
    return Outcome(exit_code, round(time.monotonic() - started, 3), captured.text(), captured.total, timed_out)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    kill_tree(proc.pid)
    with contextlib.suppress(ProcessLookupError):
        proc.kill()

"""Processes that keep running: a command started in the background goes on in a sandbox of its own (bwrap, an
overlay whose upper layer is a staging folder, as `run_in_sandbox`'s) until it ends, is stopped, or the session ends.

`Processes` is a session's table of them: at most `MAX_RUNNING` at once; each one's output kept in a bounded ring
(`RING_BYTES`, the oldest dropped and counted), read since the last read; its change set read back from its
staging layer once it has ended, never applied here. Nothing outlives the session: each process leads a process
group of its own, bwrap runs with `--die-with-parent` and the command's PID namespace dies with bwrap, the child
gets a parent-death signal (`PR_SET_PDEATHSIG`) besides, and `stop_all` (the session's close, `/clear`, Ctrl-C
twice, SIGTERM) kills every group. The processes are started from one long-lived thread of the table's own, so the
parent-death signal (which follows the thread that forked) fires when cli-agent ends, not when a turn's thread does.
"""

from __future__ import annotations

import contextlib
import os
import queue
import select
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Generator, Iterable
from dataclasses import field
from pathlib import Path
from typing import Any

from cli_agent.contracts import ToolError, dataclass
from cli_agent.fs import own_folders
from cli_agent.sandbox.environment import command_env
from cli_agent.sandbox.layout import Policy, bwrap_argv
from cli_agent.sandbox.network.session_net import SessionNet
from cli_agent.sandbox.probe import Capability
from cli_agent.sandbox.process import Limits
from cli_agent.sandbox.reap import kill_tree
from cli_agent.sandbox.runner import remove_staging, shell_argv
from cli_agent.sandbox.staging import ChangeSet, Check, collect

__all__ = ["MAX_RUNNING", "Process", "Processes"]

MAX_RUNNING = 4
RING_BYTES = 64 * 1024  # output kept per process; what is older is dropped and counted
FIRST_WAIT_S = 2.0  # how long `start` waits for the first output
_PR_SET_PDEATHSIG = 1


class Ring:
    """The last `size` bytes a process printed, and what of them has been read."""

    def __init__(self, size: int = RING_BYTES) -> None:
        self.size = size
        self.data = bytearray()
        self.total = 0  # every byte ever printed
        self.read_to = 0  # the byte (counted in `total`) the last read ended at
        self.lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self.lock:
            self.data += chunk
            self.total += len(chunk)
            if len(self.data) > self.size:
                del self.data[:len(self.data) - self.size]

    def since_last(self) -> tuple[str, int]:
        """What was printed since the last read, and how many bytes of it were dropped before it could be read."""
        with self.lock:
            start = self.total - len(self.data)
            dropped = max(0, start - self.read_to)
            new = bytes(self.data[max(0, self.read_to - start):])
            self.read_to = self.total
        return new.decode("utf-8", errors="replace"), dropped

    def last_line(self) -> str:
        with self.lock:
            lines = bytes(self.data[-4096:]).decode("utf-8", errors="replace").rstrip("\n").splitlines()
        return lines[-1] if lines else ""


@dataclass
class Process:
    number: int
    command: str
    popen: subprocess.Popen[bytes]
    staging: Path
    check: Check
    workspace: Path
    started: float = field(default_factory=time.monotonic)
    ring: Ring = field(default_factory=Ring)
    reader: threading.Thread | None = None
    changes: ChangeSet | None = None  # read back once it has ended
    changes_taken: bool = False  # its change set was handed out (to be approved, or discarded)

    @property
    def running(self) -> bool:
        return self.popen.poll() is None

    @property
    def exit_code(self) -> int | None:
        code = self.popen.poll()
        return None if code is None else (128 - code if code < 0 else code)

    def age_s(self) -> float:
        return time.monotonic() - self.started

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"process": self.number, "command": self.command, "running": self.running,
                               "exit_code": self.exit_code, "age_s": round(self.age_s(), 1)}
        if self.changes is not None and not self.changes_taken:
            out["pending_changes"] = self.changes.summary()
        return out

    def kill(self) -> None:
        """SIGKILL its whole group and all below it (bwrap, and the command's PID namespace), then wait for them."""
        kill_tree(self.popen.pid)
        with contextlib.suppress(ProcessLookupError):
            self.popen.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(timeout=5)
        if self.reader is not None:
            self.reader.join(timeout=2)

    def settle(self) -> ChangeSet:
        """Once it has ended: its change set, read back from its staging layer (which then goes)."""
        if self.changes is None:
            if self.reader is not None:
                self.reader.join(timeout=2)
            try:
                self.changes = collect(Path(os.path.realpath(self.workspace)), self.staging / "upper", self.check)
            finally:
                remove_staging(self.staging)
        return self.changes


def _drain(popen: subprocess.Popen[bytes], ring: Ring) -> None:
    assert popen.stdout is not None
    fd = popen.stdout.fileno()
    try:
        while True:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if not ready:
                if popen.poll() is not None:  # it ended; something it started may still hold the pipe
                    break
                continue
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                break
            ring.add(chunk)
    except (OSError, ValueError):
        pass
    finally:
        with contextlib.suppress(OSError):
            popen.stdout.close()


def _parent_death_signal() -> Callable[[], None]:
    """What the child runs before exec: SIGKILL when the thread that started it (the table's own thread) ends.
    libc is looked up here, before the fork; the child only calls it."""
    import ctypes  # deferred: ctypes (about 2 ms) loads with the first background process

    prctl = ctypes.CDLL(None, use_errno=True).prctl

    def die_with_us() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)

    return die_with_us


class _Launcher:
    """One long-lived thread that starts every process of a table (see the module's docstring)."""

    def __init__(self) -> None:
        self.jobs: queue.Queue[tuple[Callable[[], Any], queue.Queue[Any]]] = queue.Queue()
        threading.Thread(target=self._serve, name="background-launcher", daemon=True).start()

    def _serve(self) -> None:
        while True:
            job, answer = self.jobs.get()
            try:
                answer.put((True, job()))
            except BaseException as exc:  # handed back to the caller
                answer.put((False, exc))

    def call(self, job: Callable[[], Any]) -> Any:
        answer: queue.Queue[Any] = queue.Queue()
        self.jobs.put((job, answer))
        ok, value = answer.get()
        if not ok:
            raise value
        return value


def sandboxed_argv(capability: Capability, policy: Policy, staging: Path, command: str,
                   net: SessionNet | None = None) -> tuple[list[str], dict[str, str]]:
    """The bwrap command line of a background process and the environment it adds, as `run_in_sandbox` makes
    them: with `net` (and no `policy.network`) it joins the session's network namespace and reaches the network
    through the session's proxy."""
    upper, work = staging / "upper", staging / "work"
    upper.mkdir()
    work.mkdir()
    hidden = (*policy.hidden, *own_folders(), str(staging))
    limits = Limits(max_processes=policy.max_processes, max_file_bytes=policy.max_file_bytes)
    inner = shell_argv(command, limits)
    proxied = net if net is not None and not policy.network else None
    argv = bwrap_argv(capability.bwrap, Policy(**{**policy.__dict__, "hidden": hidden}), upper, work,
                      proxied.wrap(inner) if proxied else inner, proxied.bwrap_args() if proxied else (),
                      joined_net=proxied is not None and proxied.joined)
    return proxied.enter(argv) if proxied else argv, proxied.env() if proxied else {}


class Processes:
    """A session's background processes (see the module's docstring)."""

    def __init__(self, capability: Capability, policy: Policy, env_allow: Iterable[str] = (),
                 max_running: int = MAX_RUNNING, net: SessionNet | None = None) -> None:
        self.capability, self.policy, self.env_allow, self.net = capability, policy, tuple(env_allow), net
        self.max_running = max_running
        self.table: dict[int, Process] = {}
        self.next_number = 1
        self.lock = threading.Lock()
        self._launcher: _Launcher | None = None
        self._before_exec: Callable[[], None] = lambda: None

    def running(self) -> list[Process]:
        return [p for p in self.table.values() if p.running]

    def listing(self) -> list[Process]:
        return list(self.table.values())

    def start(self, command: str, check: Check) -> Process:
        with self.lock:
            busy = self.running()
            if len(busy) >= self.max_running:
                shown = ", ".join(f"{p.number} ({p.command[:40]})" for p in busy)
                raise ToolError(f"{len(busy)} background processes run already, the most a session may have: "
                                f"stop one first (stop_process) — running: {shown}")
            number, self.next_number = self.next_number, self.next_number + 1
        staging = Path(tempfile.mkdtemp(prefix="cli-agent-bg-"))
        try:
            argv, net_env = sandboxed_argv(self.capability, self.policy, staging, command, self.net)
            env = command_env(os.environ, self.env_allow, {**self.policy.extra_env, **net_env})
            env["PYTHONUNBUFFERED"] = "1"  # its output is read while it runs: Python's would wait in a buffer
            if self._launcher is None:
                self._launcher, self._before_exec = _Launcher(), _parent_death_signal()
            before_exec = self._before_exec
            popen = self._launcher.call(lambda: subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env,
                start_new_session=True, close_fds=True, preexec_fn=before_exec))
        except BaseException:
            remove_staging(staging)
            raise
        process = Process(number, command, popen, staging, check, self.policy.workspace)
        process.reader = threading.Thread(target=_drain, args=(popen, process.ring), name=f"background-{number}",
                                          daemon=True)
        process.reader.start()
        with self.lock:
            self.table[number] = process
        return process

    def first_output(self, process: Process, wait_s: float = FIRST_WAIT_S) -> Generator[bytes, None, None]:
        """Waits up to `wait_s` for it to print (or end), yielding a quiet tick every 0.1 s."""
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline and process.running:
            if process.ring.total and time.monotonic() > deadline - wait_s + 0.5:
                break  # it has spoken, and had half a second to say its first lines
            time.sleep(0.1)
            yield b""

    def get(self, number: int) -> Process:
        process = self.table.get(number)
        if process is None:
            known = ", ".join(str(n) for n in self.table) or "none"
            raise ToolError(f"no background process {number} in this session (known: {known})")
        return process

    def stop(self, number: int) -> Process:
        process = self.get(number)
        process.kill()
        process.settle()
        return process

    def forget(self, number: int) -> None:
        """Drop an ended process whose change set was handed out."""
        with self.lock:
            self.table.pop(number, None)

    def stop_all(self) -> int:
        """Kill every process (nothing it changed is applied) and remove their staging; how many were running."""
        with self.lock:
            processes, self.table = list(self.table.values()), {}
        running = sum(1 for p in processes if p.running)
        for process in processes:
            process.kill()
            if process.changes is None:
                remove_staging(process.staging)
        return running

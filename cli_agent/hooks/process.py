"""One hook command: `bash -c COMMAND` (sh where bash is missing) in the workspace, the event as JSON on stdin,
under a keeper (`reaper.py`, a child subreaper) that kills everything the hook started, `setsid` daemons and
double forks included, when the hook ends or its time is up. The output pipes are read here, in one loop bounded
by the same deadline: a process that keeps them open cannot hold the run. At most `OUTPUT_MAX` bytes of each of
stdout and stderr are kept; the rest is read and dropped, so a chatty hook never fills the memory or blocks on a
full pipe."""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO

from cli_agent.contracts import dataclass
from cli_agent.hooks import reaper

__all__ = ["HookOutcome", "run_hook"]

OUTPUT_MAX = 64 * 1024
_SWEEP_S = 2.0  # what the keeper gets, past the hook's time, to kill and reap what the hook started


@dataclass(frozen=True)
class HookOutcome:
    exit_code: int | None  # None: killed at its timeout, or it could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    seconds: float = 0.0


def shell_argv(command: str) -> list[str]:
    return [shutil.which("bash") or "/bin/sh", "-c", command]


def run_hook(command: str, payload: bytes, cwd: Path, timeout_s: float, env: dict[str, str],
             argv: Sequence[str] | None = None, inherit_env: bool = True) -> HookOutcome:
    """Run `command` (or `argv`: the command already wrapped, in the command sandbox) with `payload` on stdin; its
    outcome (exit 2 is for the caller to read). It returns within `timeout_s` and a few seconds, whatever the hook
    started. `env` adds to the user's environment (`inherit_env`), or is the whole of it."""
    started = time.monotonic()
    keeper = [sys.executable, "-I", "-S", reaper.__file__, f"{timeout_s:.3f}", *(argv or shell_argv(command))]
    try:
        proc = subprocess.Popen(keeper, cwd=cwd, env={**os.environ, **env} if inherit_env else env,
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                start_new_session=True)
    except OSError as exc:
        return HookOutcome(None, "", f"the hook could not start: {exc.strerror or exc}")
    out, err = bytearray(), bytearray()
    try:
        _pump(proc, payload, {proc.stdout: out, proc.stderr: err}, started + timeout_s + _SWEEP_S)
    finally:
        code = _end(proc)
    seconds = time.monotonic() - started
    timed_out = code is None or (code == reaper.TIMED_OUT and seconds >= timeout_s * 0.99)
    return HookOutcome(None if timed_out else code, _text(out), _text(err), timed_out, round(seconds, 3))


def _pump(proc: subprocess.Popen[bytes], payload: bytes, into: dict[IO[bytes] | None, bytearray],
          deadline: float) -> None:
    """Feed stdin and read stdout and stderr until both are closed and the keeper has exited, or `deadline`."""
    with selectors.DefaultSelector() as selector:
        for pipe in into:
            assert pipe is not None
            os.set_blocking(pipe.fileno(), False)
            selector.register(pipe, selectors.EVENT_READ)
        if proc.stdin is not None:
            os.set_blocking(proc.stdin.fileno(), False)
            if payload:
                selector.register(proc.stdin, selectors.EVENT_WRITE)
            else:
                proc.stdin.close()
        view = memoryview(payload)
        while (selector.get_map() or proc.poll() is None) and (left := deadline - time.monotonic()) > 0:
            if not selector.get_map():
                with contextlib.suppress(subprocess.TimeoutExpired):
                    proc.wait(timeout=left)
                continue
            for key, _ in selector.select(timeout=min(left, 0.5)):
                stream: IO[bytes] = key.fileobj  # type: ignore[assignment]  # what was registered
                if stream is proc.stdin:
                    view = _write(selector, stream, view)
                else:
                    _read(selector, stream, into[stream])


def _write(selector: selectors.BaseSelector, stream: IO[bytes], view: memoryview) -> memoryview:
    fd = stream.fileno()
    try:
        view = view[os.write(fd, view[:65536]):]
    except BlockingIOError:
        return view
    except OSError:  # it closed its stdin: it may never read the event
        view = view[:0]
    if not view:
        selector.unregister(stream)
        with contextlib.suppress(OSError):
            stream.close()
    return view


def _read(selector: selectors.BaseSelector, stream: IO[bytes], into: bytearray) -> None:
    try:
        chunk = os.read(stream.fileno(), 65536)
    except BlockingIOError:
        return
    except OSError:
        chunk = b""
    if not chunk:
        selector.unregister(stream)
        return
    if len(into) < OUTPUT_MAX:
        into += chunk[: OUTPUT_MAX - len(into)]


def _end(proc: subprocess.Popen[bytes]) -> int | None:
    """The keeper's exit code, once it and all it started are gone (None: it had to be killed)."""
    code = proc.poll()
    if code is None:  # past the deadline, or the run is being stopped: the keeper sweeps on SIGTERM
        with contextlib.suppress(ProcessLookupError, PermissionError):
            proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=_SWEEP_S)
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)  # what is left of its group, whether it ended or not
    proc.wait()
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return code


def _text(data: bytearray) -> str:
    return data.decode("utf-8", errors="replace")

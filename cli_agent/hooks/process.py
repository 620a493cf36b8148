"""One hook command: `bash -c COMMAND` (sh where bash is missing) in the workspace, as the user's own command (not
in the sandbox: the user wrote it), the event as JSON on stdin, killed with its whole process group at its
timeout. At most `OUTPUT_MAX` bytes of each of stdout and stderr are kept; the rest is read and dropped, so a
chatty hook never fills the memory or blocks on a full pipe."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO

OUTPUT_MAX = 64 * 1024


@dataclass(frozen=True)
class Outcome:
    exit_code: int | None  # None: killed at its timeout, or it could not start
    stdout: str
    stderr: str
    timed_out: bool = False
    seconds: float = 0.0


def _drain(stream: IO[bytes], into: bytearray) -> None:
    with contextlib.suppress(OSError, ValueError):
        while chunk := stream.read(65536):
            if len(into) < OUTPUT_MAX:
                into += chunk[: OUTPUT_MAX - len(into)]


def _feed(stream: IO[bytes] | None, payload: bytes) -> None:
    if stream is None:
        return
    with contextlib.suppress(OSError, ValueError):
        stream.write(payload)
    with contextlib.suppress(OSError, ValueError):
        stream.close()


def _text(data: bytearray) -> str:
    return data.decode("utf-8", errors="replace")


def run_hook(command: str, payload: bytes, cwd: Path, timeout_s: float, env: dict[str, str]) -> Outcome:
    """Run `command` with `payload` on stdin; its outcome (exit 2 is for the caller to read)."""
    shell = shutil.which("bash") or "/bin/sh"
    started = time.monotonic()
    try:
        proc = subprocess.Popen([shell, "-c", command], cwd=cwd, env={**os.environ, **env}, stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return Outcome(None, "", f"the hook could not start: {exc.strerror or exc}")
    out, err = bytearray(), bytearray()
    readers = [threading.Thread(target=_drain, args=(stream, into), daemon=True)
               for stream, into in ((proc.stdout, out), (proc.stderr, err))]
    for reader in readers:
        reader.start()
    threading.Thread(target=_feed, args=(proc.stdin, payload), daemon=True).start()  # it may never read it
    timed_out = False
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # its children too, whether it ended or not
        proc.wait()
    for reader in readers:
        reader.join(timeout=2)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()
    return Outcome(None if timed_out else proc.returncode, _text(out), _text(err), timed_out,
                   round(time.monotonic() - started, 3))

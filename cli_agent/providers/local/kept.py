"""The local model's server kept loaded between cli-agent processes, so that a user's next `-p` (or REPL) finds it
ready instead of loading the model again.

One kept server per user: its record (`server.json`: pid, port, key) and its log live in the user state dir, in
`local-server/`, beside a lock file. A cli-agent that takes the lock (`Keeper.claim`) uses the kept server while it
holds it: the one whose key (the model file, the context size, the threads, the speculative decoding, the warm
cache's folder, the engine's Python) matches its own, else a new one it starts in place of the old. A second
cli-agent at the same time finds the lock taken and starts a server of its own, stopped when it ends, as without
keeping. On its way out a cli-agent touches the record and lets the lock go. The server (`engine --keep-record`)
ends by itself once no cli-agent holds the lock and the record is older than `[local] keep_warm_s` seconds (default
300; 0 turns keeping off, and so does `CI` being set, unless `keep_warm_s` is); `cli-agent local stop` ends it at
once.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import signal
import sys
import time
from pathlib import Path
from typing import IO

from cli_agent.config import LocalSettings
from cli_agent.contracts import dataclass
from cli_agent.fs import atomic, paths

__all__ = ["stop_kept"]

KEEP_WARM_S = 300  # the default: a kept server ends after five minutes without a cli-agent
_ENGINE = "cli_agent.providers.local.engine"


def keep_warm_seconds(local: LocalSettings, environ: dict[str, str] | None = None) -> int:
    """How long a server stays loaded after its last use: `keep_warm_s` when set, else 300, or 0 under CI."""
    if local.keep_warm_s is not None:
        return local.keep_warm_s
    return 0 if (os.environ if environ is None else environ).get("CI") else KEEP_WARM_S


def folder() -> Path:
    return paths.user_state_dir() / "local-server"


def server_key(model_path: Path, context_size: int, threads: tuple[int, int], speculative: str,
               slot_folder: Path | None) -> str:
    """What a kept server must have been started with to serve this process: the threads too, which a process
    chooses by the machine's load when it starts (a server kept with one thread is not used at two)."""
    stat = model_path.stat()
    parts = (str(model_path.resolve()), stat.st_size, stat.st_mtime_ns, context_size, list(threads), speculative,
             str(slot_folder or ""), sys.executable)
    return hashlib.sha256(json.dumps(parts).encode()).hexdigest()[:24]


@dataclass(frozen=True)
class Record:
    pid: int
    port: int
    key: str


def read_record(path: Path) -> Record | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        return Record(int(data["pid"]), int(data["port"]), str(data["key"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def is_engine(pid: int) -> bool:
    """`pid` is alive and is a local model server (not a pid the system gave to something else since); without
    /proc (macOS), alive is all that can be told."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            return _ENGINE.encode() in cmdline.read()
    except FileNotFoundError:
        if os.path.isdir("/proc/self"):
            return False
    except OSError:
        return False
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


class Keeper:
    """The lock on the kept server, held by this process while it uses it."""

    def __init__(self, lock: IO[bytes], where: Path) -> None:
        self._lock = lock
        self.record_path = where / "server.json"
        self.log_path = where / "server.log"

    @classmethod
    def claim(cls) -> Keeper | None:
        """The lock, or None when another cli-agent holds it."""
        where = folder()
        try:
            where.mkdir(parents=True, exist_ok=True, mode=0o700)
            lock = open(where / "lock", "ab")  # noqa: SIM115 (held until release)
        except OSError:
            return None
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            lock.close()
            return None
        return cls(lock, where)

    def record(self) -> Record | None:
        return read_record(self.record_path)

    def write(self, record: Record) -> None:
        data = json.dumps({"pid": record.pid, "port": record.port, "key": record.key}).encode()
        fd = os.open(self.record_path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        try:
            atomic.write(fd, self.record_path.name, data, 0o600, create=False)
        finally:
            os.close(fd)

    def release(self, *, used: bool) -> None:
        """Let the lock go; `used`: the server served this process and stays (its idle time starts now)."""
        with contextlib.suppress(OSError):
            if used:
                os.utime(self.record_path)
            else:
                self.record_path.unlink(missing_ok=True)
        self._lock.close()


def stop_kept() -> int | None:
    """End the kept server now (`cli-agent local stop`); its pid, or None when there is none."""
    record = read_record(folder() / "server.json")
    if record is None or not is_engine(record.pid):
        return None
    end_server(record.pid)
    with contextlib.suppress(OSError):
        (folder() / "server.json").unlink()
    return record.pid


def end_server(pid: int, grace_s: float = 2.0) -> None:
    """SIGTERM a kept server's process group, SIGKILL it after `grace_s`."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while is_engine(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if is_engine(pid):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(pid, signal.SIGKILL)

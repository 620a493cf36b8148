"""A cap on the number of processes a command may have at once.

For an ordinary user, `RLIMIT_NPROC` does it; the shell that runs the command sets it inside the sandbox's own user
namespace, where only the sandbox's processes count. The kernel never applies that limit to root, so when
cli-agent runs as root the command goes into a cgroup of its own with `pids.max` (the v1 `pids` hierarchy, or the
v2 unified one with the pids controller), removed when the command has ended.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import time
from pathlib import Path

_BASES = (Path("/sys/fs/cgroup/pids"), Path("/sys/fs/cgroup"))


class PidCgroup:
    def __init__(self, path: Path) -> None:
        self.path = path
        self.procs = str(path / "cgroup.procs")

    @classmethod
    def create(cls, max_pids: int) -> PidCgroup | None:
        """A fresh cgroup limited to `max_pids` processes, or None (not root, or no pids controller here)."""
        if os.geteuid() != 0:
            return None
        for base in _BASES:
            if not (base / "cgroup.procs").exists():
                continue
            path = base / f"cli-agent-{secrets.token_hex(6)}"
            try:
                path.mkdir()
            except OSError:
                continue
            try:
                (path / "pids.max").write_text(str(max_pids))
                return cls(path)
            except OSError:
                with contextlib.suppress(OSError):
                    path.rmdir()
        return None

    def remove(self) -> None:
        """rmdir once its processes are gone (they are being killed: give them a moment)."""
        deadline = time.monotonic() + 5
        while True:
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.002)

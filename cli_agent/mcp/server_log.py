"""A stdio server's stderr, kept in a file of bounded size.

    log = ServerLog(log_dir / "git.log")
    stdio_client(params, errlog=log.writer)   # the server writes into a pipe
    log.spawned()                             # our copy of the pipe's write end is closed once the server has it
    log.close()                               # at the end: the rest is copied, the thread ends

A thread copies the pipe into `git.log`; past `MAX_LOG_BYTES` the file becomes `git.log.1` (replacing the older one)
and a new one starts. A server that writes hundreds of megabytes a second costs at most two files of that size,
and is never slowed down or blocked by a full pipe.
"""

from __future__ import annotations

import contextlib
import os
import threading
from pathlib import Path
from typing import TextIO

MAX_LOG_BYTES = 1 << 20
_CHUNK = 1 << 16


class ServerLog:
    def __init__(self, path: Path, limit: int = MAX_LOG_BYTES) -> None:
        self.path = path
        self.limit = limit
        path.parent.mkdir(parents=True, exist_ok=True)
        read, write = os.pipe()
        self.writer: TextIO = os.fdopen(write, "w", encoding="utf-8", errors="replace")
        self._thread = threading.Thread(target=self._copy, args=(read,), name=f"mcp-log-{path.stem}", daemon=True)
        self._thread.start()

    def spawned(self) -> None:
        """The server holds its own copy of the pipe now: close ours, so the copy ends when the server's does."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def close(self, wait: float = 2.0) -> None:
        """Close our end and let the thread copy what is left (at most `wait` seconds)."""
        self.spawned()
        self._thread.join(wait)

    def _copy(self, read: int) -> None:
        out = None
        try:
            out = self.path.open("wb", buffering=0)  # unbuffered: what was read is in the file (a failure reads it)
            size = 0
            while chunk := os.read(read, _CHUNK):
                if size and size + len(chunk) > self.limit:
                    out.close()
                    os.replace(self.path, self.path.with_name(self.path.name + ".1"))
                    out = self.path.open("wb", buffering=0)
                    size = 0
                chunk = chunk[-self.limit:]  # a chunk over the limit keeps its end: the last lines tell most
                out.write(chunk)
                size += len(chunk)
        except OSError:  # the disk is full or the folder is gone: keep draining so the server never blocks
            with contextlib.suppress(OSError):
                while os.read(read, _CHUNK):
                    pass
        finally:
            os.close(read)
            if out is not None:
                out.close()

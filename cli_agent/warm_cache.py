"""Warm start for the bundled model: the evaluated prompt's KV state kept on disk between processes.

    cache = WarmCache.for_model(model_sha256, runtime)   # user_cache_dir()/kv/<sha[:16]>-<runtime>/
    cache.check()                                         # UsageError (exit 2) naming the fix, before any load
    cache.fault(server_log)                               # a UsageError for a cache fault the server hit, or None

llama.cpp's server (llama-cpp-python) keeps the state after each reply in a disk cache under its working folder
(`.cache/llama_cache`, a SQLite index plus value files) and, for a new request, restores the state whose tokens
share the longest prefix with it: the system prompt and tool list, evaluated once, are not evaluated again by a
later process. The tokens are the key inside the cache; the folder is keyed by the model's sha256 and the runtime
version, recorded in `KEY`, so a state is never loaded into another model or runtime. The prompt plan's
fingerprint needs no folder of its own: a changed prompt shares a shorter prefix and evaluates the rest.

Faults are refused before the server starts, each with its fix: a `KEY` naming another model or runtime, a damaged
index. A value that fails to load or save (truncated, disk full) is read from the server's log after a failed
request. A state is written by the server into a new value file and then committed to the index in one SQLite
transaction, so a failed save leaves no entry that points at a partial file.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import sqlite3
from dataclasses import dataclass
from pathlib import Path

from cli_agent import paths
from cli_agent.errors import UsageError

__all__ = ["CACHE_BYTES", "WarmCache"]

CACHE_BYTES = 768 << 20  # the server's budget for saved states (the oldest go first)
_INDEX = Path(".cache/llama_cache/cache.db")
_FAULTS = (
    (re.compile(r"No space left on device|ENOSPC|disk I/O error|database or disk is full", re.I), "full"),
    (re.compile(r"UnpicklingError|EOFError|pickle data was truncated|DatabaseError|file is not a database|"
                r"malformed|Ran out of input|state size mismatch|failed to (?:load|set) state", re.I), "damaged"),
)


@dataclass(frozen=True)
class WarmCache:
    folder: Path
    model_sha256: str
    runtime: str

    @classmethod
    def for_model(cls, model_sha256: str, runtime: str) -> WarmCache:
        safe = re.sub(r"[^A-Za-z0-9.+-]", "_", runtime)
        return cls(paths.user_cache_dir() / "kv" / f"{model_sha256[:16]}-{safe}", model_sha256, runtime)

    @property
    def remove_command(self) -> str:
        return f"rm -r {shlex.quote(str(self.folder))}"

    def _key(self) -> dict[str, str]:
        return {"model_sha256": self.model_sha256, "runtime": self.runtime}

    def check(self) -> None:
        """Create the folder and its KEY, or check them; refuse another model's or runtime's, or a damaged index."""
        key_file = self.folder / "KEY"
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
            if not key_file.exists():
                tmp = key_file.with_suffix(f".tmp{os.getpid()}")
                tmp.write_text(json.dumps(self._key()), encoding="utf-8")
                os.replace(tmp, key_file)
            recorded = json.loads(key_file.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise UsageError(f"the warm-start cache {self.folder} can't be used ({exc}); remove it with: "
                             f"{self.remove_command} (or set local.warm_start = false)") from None
        if recorded != self._key():
            raise UsageError(f"the warm-start cache {self.folder} belongs to another model or runtime ({recorded}); "
                             f"remove it with: {self.remove_command}")
        self._check_index()

    def _check_index(self) -> None:
        index = self.folder / _INDEX
        if not index.exists():
            return
        try:
            with sqlite3.connect(f"file:{index}?mode=ro", uri=True) as db:
                status = db.execute("PRAGMA quick_check").fetchone()
        except sqlite3.Error as exc:
            status = (str(exc),)
        if not status or status[0] != "ok":
            raise UsageError(f"the warm-start cache {self.folder} is damaged ({status[0] if status else 'empty'}); "
                             f"remove it with: {self.remove_command}")

    def fault(self, log: str) -> UsageError | None:
        """The error for a cache fault the server's log shows, or None."""
        for pattern, kind in _FAULTS:
            if pattern.search(log):
                if kind == "full":
                    return UsageError(f"the disk is full: the warm-start cache {self.folder} could not be saved; "
                                      "free some space, or set local.warm_start = false")
                return UsageError(f"a saved state in the warm-start cache {self.folder} could not be loaded; "
                                  f"remove the cache with: {self.remove_command}")
        return None

"""Warm start for the bundled model: llama.cpp's slot save and restore, kept on disk between processes.

    cache = WarmCache.for_model(model_sha256, runtime)   # user_cache_dir()/kv/<sha[:16]>-<runtime>/
    cache.check()                                         # UsageError (exit 2) naming the fix, before any load
    cache.slot_file(plan)                                 # the file name, inside the folder, of one plan's state

llama.cpp's server saves a slot's evaluated tokens and their KV state into a file under its `slot_save_path`
(`POST /slots/0?action=save`) and loads one back (`?action=restore`); a request then evaluates only the tokens
after the prefix it shares with the restored ones. The provider restores the state of its plan before the first
request of a process and saves it when the session closes, so the system prompt and the tool schemas, evaluated
once, are not evaluated again by the next process.

The folder is keyed by the model's sha256 and the runtime version, recorded in `KEY`, so a state is never loaded
into another model or runtime (a `KEY` naming another is refused before the server starts, with its fix); inside
it a file per plan fingerprint (the system prompt and the constrained schema). A state is saved to a temporary
name and renamed into place, so a save cut short leaves no file; a file the server cannot restore (damaged,
truncated) is removed and the request evaluates its prompt whole.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
from pathlib import Path

from cli_agent.contracts import UsageError, dataclass
from cli_agent.fs import paths

_SUFFIX = ".slot"


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
        """Create the folder and its KEY, or check them; refuse another model's or runtime's."""
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

    @staticmethod
    def slot_file(plan: str) -> str:
        """The file name (relative to the folder, as the server takes it) of a plan fingerprint's saved state."""
        return re.sub(r"[^0-9a-f]", "", plan.lower())[:32] + _SUFFIX

    @staticmethod
    def temporary(name: str) -> str:
        return f"{name}.{os.getpid()}.tmp"  # llama.cpp refuses a file name that starts with a dot

    def has(self, name: str) -> bool:
        return (self.folder / name).is_file()

    def commit(self, temporary: str, name: str) -> None:
        """Rename a state the server has saved whole into place."""
        os.replace(self.folder / temporary, self.folder / name)

    def discard(self, name: str) -> None:
        with contextlib.suppress(FileNotFoundError):
            (self.folder / name).unlink()

"""How long the bundled model takes to read a prompt: what a run asks before a request it may not have time for.

    speed = PromptSpeed.kept_in(folder)       # the last measure, kept on disk between processes (folder: None,
                                              # in this process only)
    speed.seconds(unread)                     # the wait for the first token of a prompt with `unread` characters
                                              # the slot does not hold; None until measured once
    speed.measured(unread, seconds)           # after a whole reply: its wait for the first token, averaged in
    unread_chars(prompt, held)                # the characters of `prompt` after the prefix it shares with `held`

On 2 cores the bundled model reads 25 to 40 prompt tokens a second, so a first request that carries a project's
listing and the task's definitions (2,000 to 3,000 tokens the slot does not hold) waits a minute or more for its
first token. The server's slot keeps what it last read (the warm start restores the prefix every project shares),
so a prompt costs only its characters after the prefix it shares with that. The rate is kept in characters a
second, measured the way it is used (characters not held, over the wait for the first token), so no tokenizer is
needed and the characters-per-token of code, prose and JSON averages out. Only a wait over `MEASURED_CHARS`
characters is a measure: a short one is mostly the request's own overhead.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from cli_agent.contracts import dataclass

FILE = "prompt-speed.json"
MEASURED_CHARS = 2000  # the fewest characters not held whose wait counts as a measure of the reading speed
_KEEP = 0.5  # of the rate kept, the weight of the earlier measures (the rest is the newest one's)


def unread_chars(prompt: str, held: str) -> int:
    """The characters of `prompt` after the prefix it shares with `held` (what the slot holds)."""
    low, high = 0, min(len(prompt), len(held))
    while low < high:  # the longest shared prefix, by halves: each comparison is one slice compare
        middle = (low + high + 1) // 2
        if prompt[:middle] == held[:middle]:
            low = middle
        else:
            high = middle - 1
    return len(prompt) - low


@dataclass
class PromptSpeed:
    file: Path | None  # None: kept in this process only
    chars_per_s: float | None = None

    @classmethod
    def kept_in(cls, folder: Path | None) -> PromptSpeed:
        """The speed last measured, from `folder`'s file (none, unreadable or not a positive rate: not measured)."""
        file = folder / FILE if folder is not None else None
        rate = None
        if file is not None:
            with contextlib.suppress(OSError, ValueError, TypeError, AttributeError):
                value = json.loads(file.read_text(encoding="utf-8")).get("chars_per_s")
                rate = float(value) if isinstance(value, int | float) and 0 < value < 1e9 else None
        return cls(file, rate)

    def seconds(self, unread: int) -> float | None:
        """The wait for the first token of a prompt with `unread` characters the slot does not hold; None when the
        speed was never measured."""
        return unread / self.chars_per_s if self.chars_per_s else None

    def measured(self, unread: int, seconds: float) -> None:
        """A whole reply waited `seconds` for its first token, reading `unread` characters: averaged into the rate
        and kept (a short read measures nothing)."""
        if unread < MEASURED_CHARS or seconds <= 0:
            return
        rate = unread / seconds
        self.chars_per_s = rate if self.chars_per_s is None else _KEEP * self.chars_per_s + (1 - _KEEP) * rate
        if self.file is None:
            return
        temporary = self.file.with_name(f".{FILE}.{os.getpid()}")
        with contextlib.suppress(OSError):  # a rate not kept: the next process measures again
            temporary.write_text(json.dumps({"chars_per_s": round(self.chars_per_s, 3)}), encoding="utf-8")
            os.replace(temporary, self.file)
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)

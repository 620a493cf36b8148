"""What a search found: every matching line counted, the first `cap` of them (by path, then line) kept and shown,
and every file that was not searched listed with the reason.

Both search engines (ripgrep and the Python scan) feed one `Hits`, so their results have the same shape and order
whatever order the files are searched in.
"""

from __future__ import annotations

import heapq
from typing import Any

from cli_agent.contracts import dataclass

TEXT_MAX = 300  # characters of a matching line shown around the match
_SKIPPED_SHOWN = 20


@dataclass(slots=True)
class _Kept:
    """A heap entry ordered backwards, so that the heap's top is the last (path, line) kept."""

    key: tuple[str, int]
    text: str

    def __lt__(self, other: _Kept) -> bool:
        return self.key > other.key


class Hits:
    def __init__(self, cap: int) -> None:
        self.cap = max(cap, 0)
        self.total = 0  # matching lines, all of them
        self.files: dict[str, int] = {}  # path -> its matching lines
        self._kept: list[_Kept] = []
        self.skipped: list[dict[str, str]] = []
        self.skipped_total = 0

    def add(self, path: str, line: int, text: str) -> None:
        self.total += 1
        self.files[path] = self.files.get(path, 0) + 1
        if not self.cap:
            return
        entry = _Kept((path, line), text)
        if len(self._kept) < self.cap:
            heapq.heappush(self._kept, entry)
        elif entry.key < self._kept[0].key:
            heapq.heapreplace(self._kept, entry)

    def count(self, path: str, lines: int = 1) -> None:
        """Lines of `path` that matched but are not shown."""
        if lines:
            self.total += lines
            self.files[path] = self.files.get(path, 0) + lines

    def wants(self, path: str, line: int) -> bool:
        """Whether a hit at (path, line) would be kept (so its text is worth computing)."""
        return len(self._kept) < self.cap or (path, line) < self._kept[0].key

    def skip(self, path: str, reason: str) -> None:
        self.skipped_total += 1
        if len(self.skipped) < _SKIPPED_SHOWN:
            self.skipped.append({"path": path, "reason": reason})

    def drop(self, paths: set[str]) -> None:
        """Forget the kept lines of `paths` (found to be outside the workspace when checked); they stay counted."""
        self._kept = [k for k in self._kept if k.key[0] not in paths]
        heapq.heapify(self._kept)

    def forget(self, paths: set[str]) -> None:
        """Forget `paths` wholly: their lines are neither kept nor counted (files no tool may return)."""
        if not paths:
            return
        self.total -= sum(self.files.pop(p, 0) for p in paths)
        self.drop(paths)

    def shown(self) -> list[dict[str, Any]]:
        return [{"path": k.key[0], "line": k.key[1], "text": k.text} for k in sorted(self._kept, key=lambda k: k.key)]

    def result(self, pattern: str, engine: str, stopped: str = "", *, mode: str = "content", offset: int = 0,
               page: int = 0) -> dict[str, Any]:
        """The tool's answer; `stopped` says why the search ended before it had looked at everything. `mode`:
        "content" (the matching lines, from the `offset`-th on), "files" or "count" (the files with their number of
        matching lines, `page` of them from the `offset`-th on)."""
        out: dict[str, Any] = {"pattern": pattern, "total": self.total, "files_with_matches": len(self.files),
                               "engine": engine}
        notices = []
        if mode == "content":
            shown = self.shown()[offset:]
            out |= {"matches": shown, "count": len(shown)}
            left = self.total - offset - len(shown)
            if left > 0:
                notices.append(f"showing matching lines {offset + 1}-{offset + len(shown)} of {self.total} (in "
                               f"{len(self.files)} files): offset={offset + len(shown)} shows the next ones; or "
                               f"narrow the search with path= or glob=.")
        else:
            listed = sorted(self.files.items())[offset:offset + page]
            out |= {"files": [{"path": p, "matches": n} if mode == "count" else p for p, n in listed],
                    "count": len(listed)}
            left = len(self.files) - offset - len(listed)
            if left > 0:
                notices.append(f"showing files {offset + 1}-{offset + len(listed)} of {len(self.files)}; "
                               f"offset={offset + len(listed)} shows the next ones.")
        out["truncated"] = bool(stopped) or left > 0
        if stopped:
            notices.append(stopped)
        if self.skipped_total:
            out["skipped"] = self.skipped
            out["skipped_total"] = self.skipped_total
            more = "" if self.skipped_total <= len(self.skipped) else f" ({len(self.skipped)} listed)"
            notices.append(f"{self.skipped_total} files were not searched{more}; see `skipped` for why")
        if notices:
            out["notice"] = " ".join(notices)
        return out


class FileHits:
    """The matching lines of one file, held until the whole file is known to be text (a NUL byte found late makes
    it binary, and then none of its lines is shown)."""

    def __init__(self, hits: Hits, path: str) -> None:
        self.hits, self.path = hits, path
        self._pending: list[tuple[int, str]] = []
        self._more = 0  # lines that matched but can't be among the shown ones

    @property
    def found(self) -> bool:
        return bool(self._pending or self._more)

    def wants(self, line: int) -> bool:
        """Whether the text of a match on `line` may be shown (else pass None to `add`)."""
        return len(self._pending) < self.hits.cap and self.hits.wants(self.path, line)

    def add(self, line: int, text: str | None) -> None:
        if text is None:
            self._more += 1
        else:
            self._pending.append((line, text))

    def commit(self) -> None:
        for line, text in self._pending:
            self.hits.add(self.path, line, text)
        self.hits.count(self.path, self._more)
        self._pending, self._more = [], 0

    def skip(self, reason: str) -> None:
        self._pending, self._more = [], 0
        self.hits.skip(self.path, reason)


def excerpt(line: str, start: int) -> str:
    """At most TEXT_MAX characters of `line` (its ending dropped) around a match starting at `start`."""
    line = line.rstrip("\r\n")
    if len(line) <= TEXT_MAX:
        return line
    first = max(0, min(start - 80, len(line) - TEXT_MAX))
    last = first + TEXT_MAX
    return ("…" if first else "") + line[first:last] + ("…" if last < len(line) else "")

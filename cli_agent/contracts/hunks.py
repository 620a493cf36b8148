"""The unified diff of a change, computed only where it changed: cost follows the edit, not the file.

A `Region` names lines that changed (in the file before and after); everything between regions is the same in both.
An edit knows its regions; otherwise `trimmed` finds the one region between the longest common prefix and suffix,
comparing 64 KiB blocks (memcmp speed) rather than characters. Lines are fetched by walking the text once, in
order, so no list of all the lines is ever built. difflib runs on each region (with its context) alone; a region
too large for it is shown as removed and added whole.

For files whose line ending is the byte `\\n` (UTF-8, Latin-1, cp1252, Shift-JIS...) all of this runs on the bytes;
only the lines shown are decoded.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Sequence
from typing import Generic, TypeVar

from cli_agent.contracts.records import dataclass

__all__ = ["Region"]

_BLOCK = 1 << 16
_DIFFLIB_MAX = 20_000  # lines on either side of one region that difflib still compares
S = TypeVar("S", str, bytes)


@dataclass(frozen=True)
class Region:
    """Lines [before, before + removed) of the old text became lines [after, after + added) of the new (0-based)."""

    before: int
    removed: int
    after: int
    added: int


def _common_prefix(a: S, b: S) -> int:
    n, i = min(len(a), len(b)), 0
    while i < n:
        j = min(i + _BLOCK, n)
        if a[i:j] == b[i:j]:
            i = j
            continue
        lo, hi = i, j  # a[i:lo] == b[i:lo]; the first difference is in [lo, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if a[lo:mid] == b[lo:mid]:
                lo = mid
            else:
                hi = mid
        return lo
    return n


def _common_suffix(a: S, b: S, limit: int) -> int:
    """Length of the common ending of `a` and `b`, at most `limit`."""
    n, k = min(len(a), len(b), limit), 0
    la, lb = len(a), len(b)
    while k < n:
        m = min(k + _BLOCK, n)
        if a[la - m:la - k] == b[lb - m:lb - k]:
            k = m
            continue
        lo, hi = k, m  # the last `lo` are equal; the first difference from the end is in [lo, hi)
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if a[la - mid:la - lo] == b[lb - mid:lb - lo]:
                lo = mid
            else:
                hi = mid
        return lo
    return n


def _lines_in(text: S) -> int:
    nl = b"\n" if isinstance(text, bytes) else "\n"
    return text.count(nl) + (1 if text and not text.endswith(nl) else 0)  # type: ignore[arg-type]


def trimmed(before: S, after: S) -> list[Region]:
    """The one region between the common prefix and suffix (whole lines), or none when the texts are equal."""
    if before == after:
        return []
    nl = b"\n" if isinstance(before, bytes) else "\n"
    p = _common_prefix(before, after)
    start = before.rfind(nl, 0, p) + 1  # type: ignore[arg-type]
    s = _common_suffix(before, after, min(len(before), len(after)) - p)
    # the region ends after a line ending inside the common suffix, so the rest starts a line in both texts
    cut = before.find(nl, len(before) - s)  # type: ignore[arg-type]
    end_b = len(before) if cut < 0 else cut + 1
    end_a = len(after) - (len(before) - end_b)
    line = before.count(nl, 0, start)  # type: ignore[arg-type]
    return [Region(line, _lines_in(before[start:end_b]), line, _lines_in(after[start:end_a]))]


class _Cursor(Generic[S]):
    """Lines of a text by number, fetched in increasing order with one pass over the text."""

    def __init__(self, text: S) -> None:
        self.text: S = text
        self.nl: str | bytes = b"\n" if isinstance(text, bytes) else "\n"
        self.line, self.offset = 0, 0

    def lines(self, first: int, count: int) -> list[S]:
        text = self.text
        self._skip(first - self.line)
        while self.line < first and self.offset < len(text):
            self.offset = self._next(self.offset)
            self.line += 1
        out: list[S] = []
        while len(out) < count and self.offset < len(text):
            end = self._next(self.offset)
            out.append(text[self.offset:end])
            self.offset, self.line = end, self.line + 1
        return out

    def _skip(self, lines: int) -> None:
        """Move on by about `lines` lines (never past them) counting line ends in blocks, at memchr speed."""
        step = 1 << 20
        while lines > 64 and self.offset < len(self.text):
            end = min(self.offset + step, len(self.text))
            n = self.text.count(self.nl, self.offset, end)  # type: ignore[arg-type]
            if n < lines and (n or end == len(self.text)):
                end = self.text.rfind(self.nl, self.offset, end) + 1 if n else end  # type: ignore[arg-type]
                self.offset, self.line, lines = end, self.line + n, lines - n
            elif step > 256:
                step //= 2
            else:
                break

    def _next(self, offset: int) -> int:
        cut = self.text.find(self.nl, offset)  # type: ignore[arg-type]
        return len(self.text) if cut < 0 else cut + 1


def unified(before: S, after: S, regions: Sequence[Region], context: int, encoding: str = "utf-8") -> Iterator[str]:
    """The hunks (`@@` header and lines, as str) of before → after, looking only at `regions` and `context` lines."""
    old, new = _Cursor(before), _Cursor(after)
    for b0, bn, a0, an in _grouped(regions, context, _lines_in(before), _lines_in(after)):
        lines_b = [_str(x, encoding) for x in old.lines(b0, bn)]
        lines_a = [_str(x, encoding) for x in new.lines(a0, an)]
        if len(lines_b) > _DIFFLIB_MAX or len(lines_a) > _DIFFLIB_MAX:
            groups = [[("replace", 0, len(lines_b), 0, len(lines_a))]]
        else:
            groups = list(difflib.SequenceMatcher(None, lines_b, lines_a, autojunk=False)
                          .get_grouped_opcodes(context))
        for group in groups:
            first, last = group[0], group[-1]
            yield (f"@@ -{_range(b0 + first[1], last[2] - first[1])} "
                   f"+{_range(a0 + first[3], last[4] - first[3])} @@\n")
            for tag, i1, i2, j1, j2 in group:
                if tag == "equal":
                    yield from (" " + x for x in lines_b[i1:i2])
                    continue
                yield from ("-" + x for x in lines_b[i1:i2])
                yield from ("+" + x for x in lines_a[j1:j2])


def counts(before: S, after: S, regions: Sequence[Region], encoding: str = "utf-8") -> tuple[int, int]:
    """(lines added, lines removed), from the regions alone."""
    added = removed = 0
    for line in unified(before, after, regions, 0, encoding=encoding):
        if line.startswith("+"):
            added += 1
        elif line.startswith("-"):
            removed += 1
    return added, removed


def _grouped(regions: Sequence[Region], context: int, total_b: int,
             total_a: int) -> Iterator[tuple[int, int, int, int]]:
    """Regions widened by `context` lines each side and merged where they touch: (b0, b_count, a0, a_count)."""
    current: list[int] | None = None
    for r in sorted(regions, key=lambda r: r.before):
        r = Region(r.before, max(0, min(r.removed, total_b - r.before)), r.after,
                   max(0, min(r.added, total_a - r.after)))
        lead = min(context, r.before, r.after)
        b0, a0 = r.before - lead, r.after - lead
        tail = min(context, total_b - (r.before + r.removed), total_a - (r.after + r.added))
        b1, a1 = r.before + r.removed + tail, r.after + r.added + tail
        if current is not None and b0 <= current[1]:
            current[1], current[3] = max(current[1], b1), max(current[3], a1)
            continue
        if current is not None:
            yield current[0], current[1] - current[0], current[2], current[3] - current[2]
        current = [b0, b1, a0, a1]
    if current is not None:
        yield current[0], current[1] - current[0], current[2], current[3] - current[2]


def _str(line: str | bytes, encoding: str) -> str:
    return line if isinstance(line, str) else line.decode(encoding, errors="replace")


def _range(start: int, length: int) -> str:
    """difflib's `start,length` of a unified hunk header (1-based; an empty range names the line before)."""
    if length == 1:
        return f"{start + 1}"
    return f"{start + 1 if length else start},{length}"

"""The search in Python, for when ripgrep can't run (not installed, or a pattern only Python reads: look-around,
back-references): the tool's own walk, then each file in one regex pass over its whole text.

Files up to WHOLE_MAX are decoded as `read_file` decodes them (their encoding, `\\r\\n` read as `\\n`); larger ones
are read in blocks of whole lines (UTF-8, invalid bytes replaced, as rg reads them), so memory stays bounded. A
file with a NUL byte is binary, as for rg: its lines are never shown, and it is listed as skipped when the pattern
occurs in it. With the `regex` package (installed with LiteLLM) each regex call gets the time left, so a
catastrophic pattern is cut off at the deadline; plain `re` is checked between calls only.
"""

from __future__ import annotations

import os
import re
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO

from cli_agent.contracts import ToolError
from cli_agent.fs import textfile
from cli_agent.tools.handlers.hits import FileHits, Hits, excerpt

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

WHOLE_MAX = 64 << 20  # files up to this size are decoded whole; larger ones stream
BLOCK = 8 << 20
LINE_MAX = 64 << 20  # a line longer than this in a streamed file: the file is skipped, with the reason

Finder = Callable[[str, int, float], "tuple[int, int] | None"]  # (text, from, deadline) -> (start, end) or None


def finder(pattern: str, literal: bool, ignore_case: bool = False) -> Finder:
    """The first match at or after a position, as (start, end); patterns are compiled MULTILINE (`^`, `$` at lines).
    `ignore_case`: letters match either case (a literal becomes an escaped pattern)."""
    if literal and ignore_case:
        pattern, literal = re.escape(pattern), False
    if literal:
        def find_text(text: str, pos: int, deadline: float) -> tuple[int, int] | None:
            at = text.find(pattern, pos)
            return None if at < 0 else (at, at + len(pattern))
        return find_text
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # `re`'s FutureWarning on `[a&&b]`: Python's reading is the one used here
        compiled = re.compile(pattern, re.MULTILINE | (re.IGNORECASE if ignore_case else 0))
        try:
            import regex  # deferred: only for a pattern matched with a time limit

            fast = regex.compile(pattern, regex.VERSION0 | regex.MULTILINE | (regex.IGNORECASE if ignore_case else 0))
        except Exception:  # no `regex`, or a pattern it reads differently: plain `re`
            fast = None

    def find(text: str, pos: int, deadline: float) -> tuple[int, int] | None:
        if fast is not None:
            m = fast.search(text, pos, timeout=max(deadline - time.monotonic(), 0.001))
        else:
            m = compiled.search(text, pos)
        return None if m is None else m.span()
    return find


def scan(ws: Workspace, files: list[str], find: Finder, hits: Hits, deadline: float, limit_s: float) -> str:
    """Search `files` into `hits`; the reason it stopped early, or ""."""
    for rel in files:
        if time.monotonic() >= deadline:
            return f"the search was stopped at its time limit ({limit_s:g} s) before it had read every file"
        if not ws.holds_file(rel):  # a link: never followed while walking (its target inside is searched as itself)
            continue
        try:
            fd = ws.open_fd(rel)
        except ToolError as exc:
            hits.skip(rel, exc.message)
            continue
        fh = FileHits(hits, rel)
        try:
            with os.fdopen(fd, "rb") as stream:
                _scan_file(stream, rel, find, fh, deadline)
        except TimeoutError:
            raise ToolError(f"the pattern took more than {limit_s:g} s on {rel} (catastrophic backtracking? avoid "
                            f"nested quantifiers like (a+)+, or use literal=true)", matches=hits.shown()) from None
        except OSError as exc:
            hits.skip(rel, f"could not be read: {exc.strerror or exc}")
    return ""


def _scan_file(stream: BinaryIO, rel: str, find: Finder, fh: FileHits, deadline: float) -> None:
    read = stream.read
    data = read(WHOLE_MAX + 1)
    if len(data) <= WHOLE_MAX:
        fmt = textfile.detect(data)
        if fmt is None and b"\0" in data:
            return _binary(fh, data, find, deadline)
        text = textfile.to_lf(textfile.decode(data, fmt) if fmt is not None else data.decode("latin-1"))
        _scan_text(text, 1, find, fh, deadline)
        return fh.commit()
    line, carry = 1, b""
    while data:
        if b"\0" in data:
            return _binary(fh, data, find, deadline)
        block = carry + data
        cut = block.rfind(b"\n") + 1
        if not cut and len(block) > LINE_MAX:
            return fh.skip(f"a line longer than {LINE_MAX >> 20} MiB")
        text = block[:cut].decode("utf-8", "replace").replace("\r\n", "\n")
        line = _scan_text(text, line, find, fh, deadline)
        carry = block[cut:]
        data = read(BLOCK)
    if carry:
        _scan_text(carry.decode("utf-8", "replace").replace("\r\n", "\n"), line, find, fh, deadline)
    fh.commit()


def _binary(fh: FileHits, data: bytes, find: Finder, deadline: float) -> None:
    if fh.found or find(data.decode("utf-8", "replace"), 0, deadline) is not None:
        offset = data.find(b"\0")
        fh.skip(f"binary file (a NUL byte at offset {offset}); the pattern occurs in it")


def _scan_text(text: str, line: int, find: Finder, fh: FileHits, deadline: float) -> int:
    """Record the matching lines of `text` (whose first line is number `line`); the number of the line after it."""
    pos = counted = 0
    end = len(text) - 1 if text.endswith("\n") else len(text)  # no empty line after the final newline
    while pos <= end:
        span = find(text, pos, deadline)
        if span is None or span[0] > end:
            break
        start = span[0]
        line += text.count("\n", counted, start)
        counted = start
        first = text.rfind("\n", 0, start) + 1
        last = text.find("\n", start)
        last = len(text) if last < 0 else last
        at = start - first
        if span[1] > last:  # the match runs into the next line: does this line alone match?
            alone = find(text[first:last], 0, deadline)
            at = -1 if alone is None else alone[0]
        if at >= 0:
            if fh.wants(line):
                fh.add(line, excerpt(text[first:last], at))
            else:
                fh.add(line, None)
        pos = last + 1
    return line + text.count("\n", counted)

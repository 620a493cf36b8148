"""Lines of a large text file by number, read in blocks: exact counts, memory bounded by the page asked for.

One pass over the file counts its line endings (`\\n`; `\\r\\n` is one ending, a lone `\\r` none, as in
`cli_agent.fs.textfile`) and keeps the bytes of the lines asked for, at most `cap` of them: one line of a gigabyte
costs `cap`, not a gigabyte. A NUL byte anywhere makes the file binary, as for small files.

The encoding is decided from the first block (a BOM, else UTF-8 if it decodes, else the legacy codec
`textfile.detect` picks). Lines shown that are not valid in it (a file of mixed encodings) are decoded as Latin-1
and `mixed_encoding` says so: shown, never silently garbled. Only encodings whose line ending is the byte `\\n` are
streamed; a large UTF-16/32 file is refused by the caller with a clear message (`streamable`).
"""

from __future__ import annotations

import os
from dataclasses import field

from cli_agent.contracts import dataclass
from cli_agent.fs import textfile
from cli_agent.fs.textfile import TextFormat

__all__ = ["Page", "read_page", "streamable"]

BLOCK = 1 << 20
HEAD = 1 << 20  # bytes the encoding is decided from


@dataclass
class Page:
    """Lines `start`.. of a file (`lines` without endings; the last one `cut` when it was longer than the cap)."""

    fmt: TextFormat | None  # None: binary
    head: bytes = b""  # the first bytes (what a binary file's type is guessed from)
    total: int = 0  # lines in the file
    lines: list[str] = field(default_factory=list)
    cut: bool = False  # `lines` is one line, of which only the first `cap` bytes are shown
    mixed_encoding: bool = False  # some lines shown are not valid in `fmt.encoding`: shown as Latin-1
    size: int = 0


def streamable(fmt: TextFormat) -> bool:
    return not fmt.encoding.startswith(("utf-16", "utf-32"))


def read_page(fd: int, start: int, end: int | None, cap: int) -> Page:
    """Lines `start`..`end` (1-based, inclusive; None: to the end) of the open file `fd`, at most `cap` bytes."""
    head = os.pread(fd, HEAD, 0)
    fmt = textfile.detect(head) if head else TextFormat()
    if fmt is None or (not fmt.bom and b"\0" in head):
        return Page(None, head=head[:64], size=os.fstat(fd).st_size)
    if not streamable(fmt):
        return Page(fmt, size=os.fstat(fd).st_size)
    os.lseek(fd, 0, os.SEEK_SET)
    line = 1  # the number of the line the next byte belongs to
    kept: list[bytes] = []
    room = cap
    crlf = lf = size = 0
    last = b""
    collecting, beyond = True, False  # beyond: bytes follow the last one kept
    while block := os.read(fd, BLOCK):
        if b"\0" in block:
            return Page(None, head=head[:64], size=os.fstat(fd).st_size)
        crlf += block.count(b"\r\n") + (last == b"\r" and block[:1] == b"\n")
        endings = block.count(b"\n")
        if collecting:
            begin, stop, collecting = _collect(block, line, start, end, room)
            kept.append(block[begin:stop])
            room -= stop - begin
            beyond = stop < len(block)
        else:
            beyond = True
        line += endings
        lf += endings
        size += len(block)
        last = block[-1:]
    fmt = TextFormat(encoding=fmt.encoding, bom=fmt.bom, newline="\r\n" if crlf > lf - crlf else "\n",
                     mixed=bool(crlf and lf - crlf), final_newline=last == b"\n", editable=fmt.editable)
    total = lf + (1 if size and last != b"\n" else 0)
    data = b"".join(kept)
    if start == 1:
        data = data.removeprefix(fmt.bom)
    lines, cut, mixed = _decoded(data, fmt.encoding, capped=room <= 0 and beyond)
    return Page(fmt, total=total, lines=lines, cut=cut, mixed_encoding=mixed, size=size)


def _collect(block: bytes, line: int, start: int, end: int | None, room: int) -> tuple[int, int, bool]:
    """(begin, stop) of the bytes of `block` in lines start..end, at most `room` of them, and whether to go on
    collecting in the next block. `line` is the number of the line `block` starts in."""
    if line + block.count(b"\n") < start:
        return 0, 0, True
    offset = 0
    for _ in range(start - line):  # to the first wanted line, in this block
        offset = block.index(b"\n", offset) + 1
    line = max(line, start)
    stop = min(len(block), offset + max(room, 0))
    if end is not None:
        wanted = end - line + 1  # line endings still to keep
        if wanted <= 0:
            return offset, offset, False
        if block.count(b"\n", offset, stop) >= wanted:
            at = offset
            for _ in range(wanted):
                at = block.index(b"\n", at) + 1
            return offset, at, False
    return offset, stop, stop - offset < room


def _decoded(data: bytes, encoding: str, *, capped: bool) -> tuple[list[str], bool, bool]:
    """(lines, whether the only line is cut, whether some were not valid in `encoding`) of the kept bytes."""
    rows = data.split(b"\n")
    if data.endswith(b"\n") or not data:
        rows.pop()
    cut = False
    if capped and not data.endswith(b"\n"):
        if len(rows) > 1:
            rows.pop()  # a line only partly kept: the next page starts with it
        else:
            cut = True
    out: list[str] = []
    mixed = False
    for row in rows:
        row = row.removesuffix(b"\r")
        try:
            out.append(row.decode(encoding))
        except UnicodeDecodeError as exc:
            if cut and exc.start >= len(row) - 3:  # a character cut at the cap
                out.append(row[:exc.start].decode(encoding, "replace"))
            else:
                out.append(row.decode("latin-1"))
                mixed = True
    return out, cut, mixed

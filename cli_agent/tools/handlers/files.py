"""The file tools: three that read (`list_files`, `read_file`, `search`), four that plan a `Change`, and
`rename_file`, which plans two as one `Staged` set.

Every path goes through `ctx.workspace` (`cli_agent.fs.workspace`). A mutating tool reads what it needs, computes the
exact bytes it would write and returns them as a `Change`; it writes nothing (the dispatcher calls
`Workspace.apply` after approval). Files keep their format: encoding, BOM, line endings, final newline and mode
(`cli_agent.fs.textfile`). The model sees text with `\\n` line endings.
"""

from __future__ import annotations

import dataclasses
import os
import stat
from typing import Any

from cli_agent.contracts import Change, ImagePart, Staged, ToolError, image_from_bytes, image_kind
from cli_agent.fs import TextFormat, linestream, textfile
from cli_agent.tools.context import ToolContext
from cli_agent.tools.handlers import syntax_guard
from cli_agent.tools.handlers.edits import replace_text
from cli_agent.tools.handlers.search import search as search  # the search tool, a file tool as the others
from cli_agent.tools.handlers.seen import require_seen

__all__ = ["FILE_MAX"]

FILE_MAX = 32 << 20  # the largest file the mutating tools load
STREAM_FROM = 8 << 20  # read_file reads larger files in blocks, a page at a time


def list_files(ctx: ToolContext, path: str = ".", pattern: str | None = None,
               depth: int | None = None) -> dict[str, Any]:
    ws, limit = ctx.workspace, ctx.limits.list_max_entries
    entries = ws.walk(path, depth=depth, pattern=pattern, limit=limit + 1)
    result: dict[str, Any] = {"path": ws.relative(path), "entries": entries[:limit], "count": min(len(entries), limit),
                              "truncated": len(entries) > limit}
    if len(entries) > limit:
        result["notice"] = f"showing {limit} entries; narrow the listing with path=, depth= or pattern="
    elif entries.unfinished:
        result["truncated"] = True
        result["notice"] = f"{entries.unfinished}; narrow it with path=, depth= or pattern= to see the rest"
    elif not entries:
        result["notice"] = "nothing matches the pattern" if pattern else "the folder is empty"
    return result


class ImageRead(dict[str, Any]):
    """read_file's result for an image: the result, and the image the model is shown after the turn's results (the
    dispatcher puts it on the envelope, never in its data)."""

    def __init__(self, result: dict[str, Any], images: tuple[ImagePart, ...]) -> None:
        super().__init__(result)
        self.images = images


def read_file(ctx: ToolContext, path: str, start_line: int | None = None,
              end_line: int | None = None) -> dict[str, Any]:
    """Lines `start_line`..`end_line` (1-based, inclusive) of a text file, at most `read_max_bytes` of them; an
    image (PNG, JPEG, GIF, WebP) as an image part."""
    ws, cap = ctx.workspace, ctx.limits.read_max_bytes
    rel = ws.relative(path)
    fd = ws.open_fd(path)
    if ctx.seen is not None:
        ctx.seen.note(rel)
    try:
        st = os.fstat(fd)
        if st.st_size > STREAM_FROM:
            return _read_streamed(fd, rel, start_line, end_line, cap)
        data = _read_fd(fd, rel)
    finally:
        os.close(fd)
    if ctx.seen is not None:
        ctx.seen.note(rel, data)  # shown with line numbers as these bytes: replace_lines may use the numbers
    fmt = textfile.detect(data)
    if fmt is None:
        return _image(rel, data) or _binary(rel, textfile.guess_type(data), st.st_size)
    lines = textfile.lines(data, fmt)
    start, end, notices = _range(rel, start_line, end_line, len(lines))
    content, last, cut = _window(lines, start, end, cap, fmt.final_newline)
    return _page(rel, fmt, content, start, end, last, cut, len(lines), cap, notices)


def _read_streamed(fd: int, rel: str, start_line: int | None, end_line: int | None, cap: int) -> dict[str, Any]:
    """A page of a large file, read in blocks (`cli_agent.fs.linestream`): bounded memory, exact line count."""
    first = 1 if start_line is None else max(start_line, 1)
    page = linestream.read_page(fd, first, end_line, cap)
    if page.fmt is None:
        return _binary(rel, textfile.guess_type(page.head), page.size)
    fmt = page.fmt
    if not linestream.streamable(fmt):
        raise ToolError(f"{rel} is {page.size} bytes of {fmt.encoding}; read_file reads {fmt.encoding} files up to "
                        f"{STREAM_FROM} bytes. Ask the user to convert it to UTF-8")
    start, end, notices = _range(rel, start_line, end_line, page.total)
    if page.cut:
        content, last = page.lines[0], start
    else:
        last = start + len(page.lines) - 1
        content = "".join(line + ("\n" if n < page.total or fmt.final_newline else "")
                          for n, line in enumerate(page.lines, start))
    if page.mixed_encoding:
        notices.append(f"some of these lines are not valid {fmt.encoding} (the file mixes encodings); they are shown "
                       f"as latin-1")
    return _page(rel, fmt, content, start, end, last, page.cut, page.total, cap, notices)


def _read_fd(fd: int, rel: str) -> bytes:
    chunks = []
    try:
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError as exc:
        raise ToolError(f"{rel} could not be read: {exc.strerror or exc}") from None
    return b"".join(chunks)


def _image(rel: str, data: bytes) -> ImageRead | None:
    """A PNG, JPEG, GIF or WebP image as an image part the model is shown after the turn's results (its label in the
    result); one too large says the limit. None for any other binary file."""
    kind = image_kind(data)
    if kind is None:
        return None
    media_type, width, height = kind
    result = {"path": rel, "content": "", "start_line": 0, "end_line": 0, "total_lines": 0, "truncated": False,
              "binary": True, "size": len(data), "type": media_type, "width": width, "height": height}
    try:
        image = image_from_bytes(rel, data)
    except ValueError as exc:
        return ImageRead(result | {"notice": f"an image that cannot be shown: {exc}"}, ())
    return ImageRead(result | {"notice": f"an image: it is shown to you after the results as {image.label}"},
                     (image,))


def _binary(rel: str, kind: str, size: int) -> dict[str, Any]:
    return {"path": rel, "content": "", "start_line": 0, "end_line": 0, "total_lines": 0, "truncated": False,
            "binary": True, "size": size, "type": kind,
            "notice": f"binary file ({kind}, {size} bytes); its content is not shown"}


def _range(rel: str, start_line: int | None, end_line: int | None, total: int) -> tuple[int, int, list[str]]:
    """The lines asked for, checked against the file's `total`; notices about the range."""
    start = 1 if start_line is None else start_line
    end = total if end_line is None else end_line
    if start < 1 or start > max(total, 1):
        raise ToolError(f"start_line={start} is out of range: {rel} has {total} lines", valid_range=[1, total])
    if end < start and total > 0:
        raise ToolError(f"end_line={end} is before start_line={start}", valid_range=[1, total])
    notices = []
    if end > total:
        notices.append(f"the file has {total} lines; showing up to line {total}")
        end = total
    return start, end, notices


def _page(rel: str, fmt: TextFormat, content: str, start: int, end: int, last: int, cut: bool, total: int,
          cap: int, notices: list[str]) -> dict[str, Any]:
    if cut:
        notices.append(f"line {last} is longer than {cap} bytes and was cut; use search to find text in it")
    elif last < end:
        notices.append(f"showing lines {start}-{last} of {total} (read_file returns at most {cap} bytes); call "
                       f"read_file with start_line={last + 1} to read on")
    if fmt.encoding != "utf-8" or fmt.bom or fmt.newline != "\n" or fmt.mixed:
        notices.append(f"the file is {fmt.describe()}; content shows \\n line endings and edits keep the file's "
                       f"format" + ("" if fmt.editable else ", but this encoding can't be edited"))
    result: dict[str, Any] = {"path": rel, "content": content, "start_line": start, "end_line": last,
                              "total_lines": total, "truncated": cut or last < end}
    if notices:
        result["notice"] = " ".join(notices)
    return result


def _window(lines: list[str], start: int, end: int, cap: int, final_newline: bool) -> tuple[str, int, bool]:
    """(content, last line included, whether a single over-long line was cut) for lines start..end."""
    out: list[str] = []
    size, last = 0, start - 1
    for i in range(start - 1, end):
        line = lines[i] + ("\n" if i < len(lines) - 1 or final_newline else "")
        size += len(line.encode("utf-8"))
        if size > cap:
            if not out:  # one line longer than the cap: cut it, never inside a character
                return line.encode("utf-8")[:cap].decode("utf-8", "ignore"), i + 1, True
            break
        out.append(line)
        last = i + 1
    return "".join(out), last, False


def create_file(ctx: ToolContext, path: str, content: str) -> Change:
    ws = ctx.workspace
    rel = ws.check_writable(path)
    if ws.exists(rel):
        raise ToolError(f"{rel} already exists; use edit_file to change part of it or write_file to replace it")
    after = textfile.encode(_text(content, "content"), TextFormat(), what="content")
    if ctx.seen is not None:
        ctx.seen.note(rel)
    return _planned(Change(tool="create_file", kind="create", path=rel, before=None, after=after, mode=0o644,
                           encoding="utf-8"), f"create {rel}")


def edit_file(ctx: ToolContext, path: str, old: str, new: str, replace_all: bool = False) -> Change:
    """Replace the exact text `old` by `new` (once, or everywhere with `replace_all`)."""
    ws = ctx.workspace
    rel = ws.check_writable(path)
    if not _text(old, "old"):
        raise ToolError("old is empty: put the lines next to the place to change in old, and them plus your text "
                        "in new (or use write_file to replace the whole file)")
    if old == _text(new, "new"):
        raise ToolError("old and new are the same; nothing would change")
    before, fmt, mode = _load(ctx, rel, "edit_file")
    view = textfile.decode(before, fmt)
    if ctx.seen is not None and rel not in ctx.seen:
        require_seen(ctx.seen, rel, view.replace("\r\n", "\n"), old.replace("\r\n", "\n"))
    # of two readings of a re-indented new, the one that still parses
    accept = syntax_guard.still_parses if rel.endswith(".py") and ctx.syntax_check else None
    done = replace_text(view, old, new, newline=fmt.newline, replace_all=replace_all, path=rel,
                        deadline=ctx.deadline, loose=ctx.loose_edits, accept=accept)
    del view
    after = textfile.encode(done.text, fmt, what="new")
    lines, count, regions, rule = done.lines, done.count, done.regions, done.rule
    del done  # the new text: only its bytes are kept
    if after == before:
        raise ToolError(f"the edit leaves {rel} unchanged; nothing to do")
    where = ", ".join(map(str, lines[:10])) + (", ..." if len(lines) > 10 else "")
    what = f"{count} replacement{'s' if count > 1 else ''} at line{'s' if count > 1 else ''} {where}"
    what += f", matched with {rule}" if rule else ""
    return _planned(Change(tool="edit_file", kind="edit", path=rel, before=before, after=after, mode=mode,
                           encoding=fmt.display_encoding, regions=regions), f"edit {rel}: {what}")


def write_file(ctx: ToolContext, path: str, content: str) -> Change:
    """The whole new content of an existing file, in that file's encoding, BOM and line-ending convention."""
    ws = ctx.workspace
    rel = ws.check_writable(path)
    before, fmt, mode = _load(ctx, rel, "write_file")
    body = _text(content, "content")
    if fmt.newline == "\r\n" and "\r" not in body:
        body = body.replace("\n", "\r\n")
    after = textfile.encode(body, fmt, what="content")
    if after == before:
        raise ToolError(f"{rel} already has exactly this content; nothing to write")
    if ctx.seen is not None:
        ctx.seen.note(rel)
    return _planned(Change(tool="write_file", kind="write", path=rel, before=before, after=after, mode=mode,
                           encoding=fmt.display_encoding), f"rewrite {rel}")


def delete_file(ctx: ToolContext, path: str) -> Change:
    rel = ctx.workspace.check_writable(path)
    _require(ctx, rel, "delete_file")
    before, st = _bounded(ctx, rel, "delete_file")
    fmt = textfile.detect(before)
    what = f"delete {rel}" + ("" if fmt else f" ({textfile.guess_type(before)}, {len(before)} bytes)")
    return _planned(Change(tool="delete_file", kind="delete", path=rel, before=before, after=None,
                           mode=stat.S_IMODE(st.st_mode), encoding=fmt.display_encoding if fmt else "latin-1"), what)


def rename_file(ctx: ToolContext, path: str, new_path: str) -> Staged:
    """A delete and a create with the same bytes and mode, each side checked like any write, approved and applied
    as one `Staged` set."""
    ws = ctx.workspace
    source = ws.check_writable(path)
    target = ws.check_writable(new_path)
    if source == target:
        raise ToolError(f"{path} and {new_path} are the same file")
    if ws.exists(target):
        raise ToolError(f"{target} already exists; delete it first or choose another name",
                        nearest=ws.nearest(target))
    if not ws.exists(source):
        raise ws.not_found(source)
    data, st = ws.read(source)
    mode = st.st_mode & 0o777
    changes = (Change("rename_file", "create", target, None, data, mode=mode, summary=f"renamed from {source}"),
               Change("rename_file", "delete", source, data, None, summary=f"renamed to {target}"))
    return Staged({"path": source, "new_path": target, "bytes": len(data)}, changes)


def _text(value: Any, name: str) -> str:
    if not isinstance(value, str):
        raise ToolError(f"{name} must be a string, not {type(value).__name__}")
    return value


def _require(ctx: ToolContext, rel: str, tool: str) -> None:
    if not ctx.workspace.exists(rel):
        err = ctx.workspace.not_found(rel)
        if tool != "delete_file":
            err = ToolError(err.message + "; use create_file to make a new file", **err.hints)
        raise err


def _bounded(ctx: ToolContext, rel: str, tool: str) -> tuple[bytes, os.stat_result]:
    data, st = ctx.workspace.read(rel, limit=FILE_MAX + 1)
    if len(data) > FILE_MAX:
        raise ToolError(f"{rel} is {st.st_size} bytes; {tool} handles files up to {FILE_MAX} bytes")
    return data, st


def _load(ctx: ToolContext, rel: str, tool: str) -> tuple[bytes, TextFormat, int]:
    """The bytes, text format and permission bits of an existing, editable text file."""
    _require(ctx, rel, tool)
    before, st = _bounded(ctx, rel, tool)
    fmt = textfile.detect(before)
    if fmt is None:
        raise ToolError(f"{rel} is a binary file ({textfile.guess_type(before)}, {len(before)} bytes); {tool} only "
                        f"changes text files")
    if not fmt.editable:
        textfile.encode("", fmt)  # raises the explanation
    return before, fmt, stat.S_IMODE(st.st_mode)  # setuid, setgid and sticky bits included


def _planned(change: Change, what: str) -> Change:
    added, removed = change.stats()  # from the changed lines only
    return dataclasses.replace(change, summary=f"{what} (+{added} -{removed} lines)")

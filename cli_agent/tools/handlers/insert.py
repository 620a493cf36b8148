"""`insert_text`: add lines to an existing file after a line number or at its end, with no `old` to copy.

The inserted text takes the file's line endings and gets a final newline; appending to a file whose last line has
no newline first ends that line. Inserting at a line number needs the file read in this conversation (the number
comes from what the model saw); appending does not.
"""

from __future__ import annotations

from cli_agent.contracts import Change, ToolError
from cli_agent.fs import textfile
from cli_agent.tools.context import ToolContext
from cli_agent.tools.handlers.files import _load, _planned, _text
from cli_agent.tools.handlers.seen import require_seen


def insert_text(ctx: ToolContext, path: str, text: str, after_line: int | None = None) -> Change:
    rel = ctx.workspace.check_writable(path)
    body = _text(text, "text").replace("\r\n", "\n")
    if not body.strip("\n"):
        raise ToolError("text is empty: put the lines to insert in text")
    before, fmt, mode = _load(ctx, rel, "insert_text")
    view = textfile.decode(before, fmt)
    lf = view.replace("\r\n", "\n")
    lines = lf.split("\n")
    if lf.endswith("\n"):
        lines.pop()
    total = len(lines) if lf else 0
    if after_line is not None:
        require_seen(ctx.seen, rel, lf, line=after_line)
        if after_line > total:
            raise ToolError(f"after_line={after_line} is past the end: {rel} has {total} lines; leave after_line "
                            f"out to append at the end", total_lines=total)
    at = total if after_line is None else after_line
    if not body.endswith("\n"):
        body += "\n"
    head = "".join(line + "\n" for line in lines[:at])
    tail = lf[len(head):] if at < total else ""
    if at == total and lf and not lf.endswith("\n"):
        head, tail = lf + "\n", ""
    elif at == total:
        head, tail = lf, ""
    new_view = head + body + tail
    if fmt.newline == "\r\n":
        new_view = new_view.replace("\n", "\r\n")
    after = textfile.encode(new_view, fmt, what="text")
    where = "at the end" if after_line is None else "at the top" if at == 0 else f"after line {at}"
    count = body.count("\n")
    return _planned(Change(tool="insert_text", kind="edit", path=rel, before=before, after=after, mode=mode,
                           encoding=fmt.display_encoding),
                    f"insert {count} line{'s' if count != 1 else ''} {where} of {rel}")

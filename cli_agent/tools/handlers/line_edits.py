"""Edits that need no copied text: `replace_lines` (lines N–M of a file shown with line numbers) and
`replace_definition` (a whole Python function or class, by name).

A small model copies `old` badly; line numbers and names it reads off what it was shown. Each form guards against
the way it can go wrong:
- `replace_lines` needs the file shown in this conversation exactly as it is now (`SeenFiles.shown_as`): a file
  changed since it was read (by an edit, a command, the user) is refused with the requested lines as they are now,
  numbered, and then counts as shown, so the next try can use those numbers. Two slips of a model that copies
  from numbered lines are mended: the `NUMBER| ` prefixes copied into `new` are dropped, and in a Python file,
  `new` written at another indentation than the lines it replaces is moved to theirs when only that makes the file
  parse (then quotes and colons, as tools.handlers.python_mend mends them);
- `replace_definition` finds the definition with `ast` (decorators included), re-indents the new text to the
  definition's column, and refuses a result that does not parse (as every `.py` change is checked before approval).
"""

from __future__ import annotations

import ast
import re
import textwrap

from cli_agent.contracts import Change, ToolError, numbered
from cli_agent.fs import textfile
from cli_agent.tools.context import ToolContext, digest
from cli_agent.tools.handlers.files import _load, _planned, _text
from cli_agent.tools.handlers.python_mend import mended
from cli_agent.tools.handlers.seen import require_seen
from cli_agent.tools.handlers.syntax_guard import still_parses

_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_NUMBERED = re.compile(r"^ *\d+\| ?")


def replace_lines(ctx: ToolContext, path: str, start_line: int, end_line: int, new: str) -> Change:
    """Lines `start_line`..`end_line` (1-based, inclusive) become `new` (empty: they are deleted)."""
    rel = ctx.workspace.check_writable(path)
    body = _text(new, "new").replace("\r\n", "\n")
    before, fmt, mode = _load(ctx, rel, "replace_lines")
    lf = textfile.decode(before, fmt).replace("\r\n", "\n")
    lines = lf.split("\n")
    if lf.endswith("\n"):
        lines.pop()
    total = len(lines) if lf else 0
    if not 1 <= start_line <= end_line:
        raise ToolError(f"start_line={start_line} and end_line={end_line} are not a range of lines: 1 <= start_line "
                        f"<= end_line", total_lines=total)
    if end_line > total:
        raise ToolError(f"end_line={end_line} is past the end: {rel} has {total} lines", total_lines=total)
    seen = ctx.seen
    if seen is not None and seen.shown_as(rel) != digest(before):
        seen.note(rel, before)
        raise ToolError(f"{rel} changed since it was shown with line numbers (or was never read), so this change was "
                        f"not made. Lines {start_line}-{end_line} as they are now are below (as NUMBER| text; the "
                        f"numbers are not part of the file): check the numbers and send the change again.",
                        region=numbered(lf, start_line, end_line), total_lines=total)
    body = _unnumbered(body, lines[start_line - 1:end_line])
    if body and not body.endswith("\n"):
        body += "\n"
    head = "".join(line + "\n" for line in lines[:start_line - 1])
    rest = lines[end_line:]
    tail = "".join(line + "\n" for line in rest)
    if rest and not lf.endswith("\n"):
        tail = tail[:-1]
    elif not rest and not lf.endswith("\n") and body:
        body = body[:-1]  # the file had no final newline: the new last line keeps it that way
    what = ""
    if rel.endswith((".py", ".pyi")):
        body = _reindented(lf, head, body, tail, lines[start_line - 1:end_line])
        body, what = mended(lf, lambda b: head + b + tail, body)
    after = _encoded(head + body + tail, fmt)
    if after == before:
        raise ToolError(f"lines {start_line}-{end_line} of {rel} already read exactly so; nothing would change")
    count = end_line - start_line + 1
    return _planned(Change(tool="replace_lines", kind="edit", path=rel, before=before, after=after, mode=mode,
                           encoding=fmt.display_encoding),
                    f"replace line{'s' if count > 1 else ''} {start_line}" +
                    (f"-{end_line}" if count > 1 else "") + f" of {rel}" + (f" ({what})" if what else ""))


def replace_definition(ctx: ToolContext, path: str, name: str, new: str) -> Change:
    """The Python function or class `name` (`func`, `Class`, `Class.method`), decorators included, becomes `new`."""
    rel = ctx.workspace.check_writable(path)
    if not rel.endswith((".py", ".pyi")):
        raise ToolError(f"replace_definition works on Python files (.py); use edit_file or replace_lines for {rel}")
    body = textwrap.dedent(_text(new, "new").replace("\r\n", "\n")).strip("\n")
    if not body:
        raise ToolError("new is empty: put the whole new definition in new (to remove a definition, use "
                        "replace_lines with an empty new)")
    before, fmt, mode = _load(ctx, rel, "replace_definition")
    lf = textfile.decode(before, fmt).replace("\r\n", "\n")
    try:
        tree = ast.parse(lf)
    except SyntaxError as exc:
        raise ToolError(f"{rel} does not parse as Python (line {exc.lineno}: {exc.msg}); use edit_file or "
                        f"replace_lines") from None
    except (RecursionError, MemoryError):
        raise ToolError(f"{rel} is nested too deeply for Python's parser; use edit_file or replace_lines") from None
    found = _find(tree, name)
    if not found:
        known = sorted(q for q, _ in _definitions(tree))[:40]
        raise ToolError(f"no function or class named {name!r} in {rel}", definitions=known)
    if len(found) > 1:
        lines_at = ", ".join(str(node.lineno) for node in found)
        raise ToolError(f"{name!r} is defined {len(found)} times in {rel} (lines {lines_at}); use replace_lines")
    node = found[0]
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    last = node.end_lineno or node.lineno
    require_seen(ctx.seen, rel, lf, line=first)
    lines = lf.split("\n")
    indent = lines[first - 1][:len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    replacement = textwrap.indent(body, indent, lambda line: bool(line.strip())) + "\n"
    head = "".join(line + "\n" for line in lines[:first - 1])
    tail = "\n".join(lines[last:])
    replacement, what = mended(lf, lambda b: head + b + tail, replacement)
    after = _encoded(head + replacement + tail, fmt)
    if after == before:
        raise ToolError(f"{name} in {rel} already reads exactly so; nothing would change")
    return _planned(Change(tool="replace_definition", kind="edit", path=rel, before=before, after=after, mode=mode,
                           encoding=fmt.display_encoding),
                    f"replace {name} (lines {first}-{last}) of {rel}" + (f" ({what})" if what else ""))


def _unnumbered(body: str, old: list[str]) -> str:
    """`new` without the `NUMBER| ` prefixes a model copied from numbered lines, when lines after its first carry
    them and the lines replaced do not (a file whose own lines look so keeps them)."""
    rows = body.split("\n")
    if not any(_NUMBERED.match(row) for row in rows[1:]) or any(_NUMBERED.match(row) for row in old):
        return body
    return "\n".join(_NUMBERED.sub("", row, count=1) for row in rows)


def _reindented(before: str, head: str, body: str, tail: str, old: list[str]) -> str:
    """`body` moved to the indentation of the first line it replaces, when the file parses only so (judged as the
    syntax guard judges a change: a file too large, or one that did not parse before, is left as it is)."""
    have = _indent(body.split("\n"))
    want = _indent(old)
    if have is None or want is None or have == want or still_parses(before, head + body + tail):
        return body
    rows = body.split("\n")
    if want > have:
        moved = [" " * (want - have) + row if row.strip() else row for row in rows]
    elif all(not row.strip() or row[:have - want].isspace() for row in rows):
        moved = [row[have - want:] if row.strip() else row for row in rows]
    else:
        return body
    candidate = "\n".join(moved)
    return candidate if still_parses(before, head + candidate + tail) else body


def _indent(rows: list[str]) -> int | None:
    first = next((row for row in rows if row.strip()), None)
    return None if first is None else len(first) - len(first.lstrip(" "))


def _encoded(view: str, fmt: textfile.TextFormat) -> bytes:
    if fmt.newline == "\r\n":
        view = view.replace("\n", "\r\n")
    return textfile.encode(view, fmt, what="new")


def _definitions(tree: ast.AST, prefix: str = "") -> list[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class, nested ones as `Outer.inner`."""
    out: list[tuple[str, ast.AST]] = []
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, _DEFINITIONS):
            qualified = prefix + child.name
            out.append((qualified, child))
            out += _definitions(child, qualified + ".")
        elif not isinstance(child, ast.Lambda):
            out += _definitions(child, prefix)
    return out


def _find(tree: ast.AST, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef]:
    """The definitions whose qualified name is `name`; else, for a plain name, those whose own name it is."""
    every = _definitions(tree)
    exact = [node for qualified, node in every if qualified == name]
    if not exact and "." not in name:
        exact = [node for qualified, node in every if qualified.rpartition(".")[2] == name]
    return [n for n in exact if isinstance(n, _DEFINITIONS)]

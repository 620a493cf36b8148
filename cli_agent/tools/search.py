"""The `search` tool: a regular expression (or literal text) over the workspace's text files, line by line.

Patterns use Python `re` syntax and are checked with `re` (so an invalid one is reported with `re`'s message and
position). Matching runs in-process with the `regex` package (installed with LiteLLM), whose `timeout=` interrupts
a single catastrophic match; the whole search shares one deadline, `ctx.limits.search_timeout_s`. Without `regex`,
`re` is used with the deadline checked between lines only. Never a subprocess. A pattern does not span lines.
"""

from __future__ import annotations

import re
import time
import warnings
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from cli_agent import textfile
from cli_agent.envelope import ToolError
from cli_agent.tools import ToolContext

if TYPE_CHECKING:
    from cli_agent.sandbox import Workspace

__all__ = ["search"]

SEARCH_FILE_MAX = 4 << 20  # larger files are skipped (and counted)
MAX_FILES = 20_000
_TEXT_MAX = 300


def search(ctx: ToolContext, pattern: str, path: str | None = None, glob: str | None = None,
           literal: bool = False) -> dict[str, Any]:
    """Lines matching `pattern` in the text files below `path` (default: everywhere) whose path matches `glob`."""
    if not pattern:
        raise ToolError("pattern is empty; give the text or regular expression to look for")
    find = _matcher(re.escape(pattern) if literal else pattern)
    ws, limits = ctx.workspace, ctx.limits
    deadline = time.monotonic() + limits.search_timeout_s
    files = [f for f in ws.walk(path or ".", pattern=glob or "**", limit=MAX_FILES) if not f.endswith("/")]
    matches: list[dict[str, Any]] = []
    searched = skipped = 0
    notice = ""
    for rel in files:
        if time.monotonic() >= deadline:
            notice = f"search stopped after {limits.search_timeout_s:g} s, {searched} of {len(files)} files read"
            break
        lines = _text_lines(ws, rel)
        if lines is None:
            skipped += 1
            continue
        searched += 1
        for number, line in enumerate(lines, 1):
            try:
                hit = find(line, deadline)
            except TimeoutError:
                raise ToolError(f"the pattern took more than {limits.search_timeout_s:g} s on {rel} line {number} "
                                f"(catastrophic backtracking? avoid nested quantifiers like (a+)+, or use "
                                f"literal=true)", matches=matches) from None
            if hit is not None:
                matches.append({"path": rel, "line": number, "text": _excerpt(line, hit)})
                if len(matches) >= limits.search_max_results:
                    break
        if len(matches) >= limits.search_max_results:
            notice = f"showing the first {limits.search_max_results} matches; narrow the search with path= or glob="
            break
        if time.monotonic() >= deadline:
            notice = f"search stopped after {limits.search_timeout_s:g} s, {searched} of {len(files)} files read"
            break
    if len(files) >= MAX_FILES and not notice:
        notice = f"only the first {MAX_FILES} files were searched; narrow the search with path= or glob="
    result: dict[str, Any] = {"pattern": pattern, "matches": matches, "count": len(matches),
                              "files_searched": searched, "truncated": bool(notice)}
    if skipped:
        result["skipped"] = skipped  # binary, too large, or unreadable
    if notice:
        result["notice"] = notice
    return result


def _matcher(pattern: str) -> Callable[[str, float], tuple[int, int] | None]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc.msg} at position {exc.pos}; fix it, or set "
                            f"literal=true to search for the text as it is", position=exc.pos) from None
        try:
            import regex

            fast = regex.compile(pattern, regex.VERSION0)
        except Exception:  # no `regex`, or a pattern it reads differently: plain `re`
            fast = None

    def find(line: str, deadline: float) -> tuple[int, int] | None:
        if fast is not None:
            m = fast.search(line, timeout=max(deadline - time.monotonic(), 0.001))
        else:
            m = compiled.search(line)
        return m.span() if m is not None else None

    return find


def _text_lines(ws: Workspace, rel: str) -> list[str] | None:
    try:
        data = ws.read_bytes(rel, limit=SEARCH_FILE_MAX + 1)
    except ToolError:
        return None
    if len(data) > SEARCH_FILE_MAX:
        return None
    fmt = textfile.detect(data)
    return textfile.lines(data, fmt) if fmt is not None else None


def _excerpt(line: str, span: tuple[int, int]) -> str:
    line = line.rstrip("\r")
    if len(line) <= _TEXT_MAX:
        return line
    start = max(0, min(span[0] - 80, len(line) - _TEXT_MAX))
    return ("…" if start else "") + line[start:start + _TEXT_MAX] + ("…" if start + _TEXT_MAX < len(line) else "")

"""The `search` tool: a regular expression (or literal text) over the workspace's text files, line by line.

The pattern must be a valid Python `re` pattern (an invalid one is reported with `re`'s message and position).
ripgrep runs it when it can (`tools.handlers.ripgrep`); a pattern rg reads differently or not at all (look-around,
back-references, `[a&&b]`...) and a machine without rg use the Python scan (`tools.handlers.textscan`). Both walk
the same files (`.gitignore` honoured, `.git` and credential files skipped, no link followed, every size), count
every matching line, show the first `search_max_results` by path and line, and list the files they did not search
with the reason.
The search stops at `search_timeout_s` or the run's deadline, whichever comes first, and then says so.
"""

from __future__ import annotations

import re
import time
import warnings
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import ToolError
from cli_agent.fs import credential_globs, glob_problem
from cli_agent.tools.context import ToolContext
from cli_agent.tools.handlers import ripgrep, textscan
from cli_agent.tools.handlers.hits import Hits, excerpt

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

MAX_FILES = 1_000_000  # files the Python scan lists; rg has no such limit
OUTPUT_MODES = ("content", "files", "count")
CONTEXT_MAX = 10  # lines of context either side of a match
CONTEXT_FILE_MAX = 8 << 20  # a file read for context lines is read this far
_IGNORE_MAX = 1 << 20


def search(ctx: ToolContext, pattern: str, path: str | None = None, glob: str | None = None,
           literal: bool = False, ignore_case: bool = False, output_mode: str = "content", context: int = 0,
           offset: int = 0) -> dict[str, Any]:
    """Lines matching `pattern` in the text files below `path` (default: everywhere) whose path matches `glob`;
    with `output_mode` "files" or "count", the files that match (with their number of matching lines)."""
    if output_mode not in OUTPUT_MODES:
        raise ToolError(f"output_mode must be one of {', '.join(OUTPUT_MODES)}, not {output_mode!r}")
    if not 0 <= context <= CONTEXT_MAX or offset < 0:
        raise ToolError(f"context must be 0 to {CONTEXT_MAX} and offset 0 or more")
    if not pattern:
        raise ToolError("pattern is empty; give the text or regular expression to look for")
    problem = glob_problem(glob) if glob else None
    if problem is not None:
        raise ToolError(f"the glob {glob!r} is not a valid glob: {problem}")
    python_only = False if literal else _python_only(pattern)
    ws, limits = ctx.workspace, ctx.limits
    scope, is_dir = ws.resolve(path or ".")
    why = ws.secret(ws.relative(path or ".")) or ws.secret(scope)
    if why is not None:
        raise ToolError(f"{scope} is a credential {'folder' if is_dir else 'file'} ({why}); cli-agent's file tools "
                        "never search credentials")
    if not is_dir and not ws.holds_file(scope):
        raise ToolError(f"{scope} is not a regular file or a folder; nothing to search")
    deadline = ctx.deadline_within(limits.search_timeout_s)
    page = limits.search_max_results
    cap = offset + page if output_mode == "content" else 0  # files and counts need no line's text
    hits = Hits(cap)
    if time.monotonic() >= deadline:
        return hits.result(pattern, "none", "the search was not started: the run's time limit has passed")
    stopped = None
    if limits.search_engine != "python" and not python_only:
        rules = [*ripgrep.ignore_rules(_gitignores_above(ws, scope)), *credential_globs()] if is_dir else []
        stopped = ripgrep.run(ws.root, scope, is_dir, pattern, literal=literal, glob=glob, ignore_rules=rules,
                              hits=hits, deadline=deadline, ignore_case=ignore_case)
        engine = "ripgrep"
    if stopped is None:
        hits = Hits(cap)
        listing = ws.walk(scope, pattern=glob or "**", limit=MAX_FILES)
        files = [f for f in listing if not f.endswith("/")]
        stopped = textscan.scan(ws, files, textscan.finder(pattern, literal, ignore_case), hits, deadline,
                                limits.search_timeout_s)
        unfinished = listing.unfinished or (f"the file list stopped at {MAX_FILES:,} files" if len(listing) >= MAX_FILES
                                            else None)
        if unfinished and not stopped:
            stopped = f"only part of the tree was searched: {unfinished}; narrow it with path= or glob="
        engine = "python"
    hits.forget({p for p in hits.files if ws.secret(p) is not None})  # credentials: neither shown nor counted
    outside = {m["path"] for m in hits.shown() if not ws.holds_file(m["path"])}
    if outside:  # a link put in place of a folder while rg ran: those lines are not shown
        hits.drop(outside)
        for rel in sorted(outside):
            hits.skip(rel, "changed into (or through) a link while it was searched; not shown")
    result = hits.result(pattern, engine, stopped, mode=output_mode, offset=offset, page=page)
    if context and output_mode == "content":
        _add_context(ws, result["matches"], context)
    return result


def _add_context(ws: Workspace, matches: list[dict[str, Any]], context: int) -> None:
    """Give each shown match the `context` lines before and after it (`before`, `after`), read from its file."""
    cache: dict[str, list[str] | None] = {}
    for match in matches:
        path = match["path"]
        if path not in cache:
            try:
                data = ws.read_bytes(path, limit=CONTEXT_FILE_MAX)
                cache[path] = data.decode("utf-8", errors="replace").splitlines()
            except ToolError:
                cache[path] = None
        lines = cache[path]
        if lines is None:
            continue
        at = match["line"] - 1
        match["before"] = [excerpt(line, 0) for line in lines[max(0, at - context):at]]
        match["after"] = [excerpt(line, 0) for line in lines[at + 1:at + 1 + context]]


def _python_only(pattern: str) -> bool:
    """Check the pattern with `re`; True when rg can't be trusted to read it the same way."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            re.compile(pattern)
        except re.error as exc:
            raise ToolError(f"invalid regular expression: {exc.msg} at position {exc.pos}; fix it, or set "
                            f"literal=true to search for the text as it is", position=exc.pos) from None
    # `re` warns where it reads a class differently from rg (nested sets, `&&`, `--`, `~~`, `||`)
    return bool(caught) or bool(re.search(r"\\[0-9<>]|\\b\{|\(\?[aLu]|\(\?<?[=!]", pattern))


def _gitignores_above(ws: Workspace, scope: str) -> list[tuple[str, str]]:
    """(folder, text) of the `.gitignore` files from the root down to `scope`'s parent."""
    if scope == ".":
        return []
    parts = scope.split("/")
    out = []
    for k in range(len(parts)):
        folder = "/".join(parts[:k])
        try:
            data = ws.read_bytes((folder + "/" if folder else "") + ".gitignore", limit=_IGNORE_MAX)
        except ToolError:
            continue
        out.append((folder, data.decode("utf-8", "surrogateescape")))
    return out

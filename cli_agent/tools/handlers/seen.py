"""Read before you edit: the refusal that shows the model the relevant lines of a file it has not seen in this
conversation (which files it has seen: `cli_agent.tools.context.SeenFiles`).

    seen = SeenFiles()                      # one per conversation (the agent clears it with the conversation)
    seen.note("src/app.py")                 # read_file, create_file, write_file, the task's files shown up front
    require_seen(seen, rel, view, old)      # raises ToolError with the region `old` is about, numbered

A model that edits a file it never read makes `old` up. The refusal carries what it needed: the place `old`
matches (or the closest lines to it) with line numbers, and the file counts as seen afterwards, so the second
attempt can succeed. `tools run` and workflow steps have no conversation: their context has no `SeenFiles`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli_agent.contracts import ToolError, numbered
from cli_agent.tools.handlers.edits import closest_lines

if TYPE_CHECKING:
    from cli_agent.tools.context import SeenFiles


def require_seen(seen: SeenFiles | None, rel: str, view: str, old: str = "", *, line: int | None = None) -> None:
    """Nothing when there is no conversation or `rel` was seen; else a ToolError with the region that `old` (or
    the line number `line`) is about."""
    if seen is None or rel in seen:
        return
    seen.note(rel)
    total = view.count("\n") + (not view.endswith("\n"))
    at = view.find(old) if old else -1
    if line is not None:
        region = numbered(view, max(line, 1), max(line, 1), around=5)
        where = f"line {line} and its neighbours are"
    elif at >= 0:
        first = view.count("\n", 0, at) + 1
        region = numbered(view, first, first + old.count("\n"))
        where = f"old is at line {first}"
    else:
        close = closest_lines(view, old) if old.strip() else []
        if close:
            first = int(close[0]["line"])
            region = numbered(view, first, first + max(old.count("\n"), 1))
            where = f"old is not in it exactly; the closest lines start at line {first}"
        else:
            region = numbered(view, 1, min(total, 30), around=0)
            where = "old is not in it; its first lines are"
    raise ToolError(f"{rel} was not read in this conversation, so this change was not made: {where} (below, as "
                    f"NUMBER| text; the numbers are not part of the file). Check them and send the change again.",
                    region=region, total_lines=total)

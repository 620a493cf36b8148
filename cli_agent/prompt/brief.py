"""What the model sees with the task before its first step: the task's files, shown with their relevant lines
(`cli_agent.prompt.task_files`), and where the task's words are defined (`cli_agent.prompt.repo_map`).

    brief = briefer(workspace, seen, files=True, repo_map=True)
    text = brief(task)          # None when neither finds anything; the files shown count as read (`seen`)

Only the task's first `TASK_CHARS` characters are worked through: a task of megabytes costs the brief what a
long one does, whatever the run's deadline.

Every line number shown is vouched for by the bytes it was read from (`SeenFiles.note` / `numbered`), so
`replace_lines` may use it until the file changes.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from cli_agent.prompt.repo_map import Outline
from cli_agent.prompt.repo_map import repo_map as ranked
from cli_agent.prompt.task_files import task_brief

if TYPE_CHECKING:
    from cli_agent.fs import Workspace
    from cli_agent.tools import SeenFiles

__all__ = ["briefer"]

TASK_CHARS = 50_000  # of the task's text the brief looks at: the files and names a task points to are in its start


def briefer(workspace: Workspace, seen: SeenFiles | None, *, files: bool = True,
            repo_map: bool = False) -> Callable[[str], str | None]:
    """What the model sees with the task before its first step: the task's files (`files`; the files shown count
    as read) and where the task's words are defined (`repo_map`, cli_agent.prompt.repo_map)."""
    outline = None

    def brief(task: str) -> str | None:
        nonlocal outline
        task = task[:TASK_CHARS]
        parts = []
        if files:
            found = task_brief(task, workspace)
            if found is not None:
                for path in found.paths:
                    if seen is not None:
                        seen.note(path, _bytes(workspace, path))
                parts.append(found.text)
        if repo_map:
            outline = outline or Outline(workspace)
            where = ranked(task, outline)
            if where is not None:
                for path in where.paths:
                    data = _bytes(workspace, path)
                    if seen is not None and data is not None:
                        seen.numbered(path, data)
                parts.append(where.text)
        return "\n\n".join(parts) or None

    return brief


def _bytes(workspace: Workspace, path: str) -> bytes | None:
    """The file as it was shown (its line numbers are valid for these bytes), or None when it can't be read."""
    try:
        return workspace.read_bytes(path, limit=16 << 20)
    except Exception:  # ToolError, OSError: then its numbers are not vouched for
        return None

"""The compact system prompt, for small local models (every prompt token costs them tens of milliseconds), and
the workspace listing both prompts show: junk left out, ranked, within a budget.

    render_compact(ctx, tools, context_sections)   # a few rules, one line a tool, the call format, the files
    ranked_listing(paths, budget_chars)            # (paths shown, how many were left out)

The compact prompt keeps what a model cannot do without: the rules that change its behaviour, each tool as a
signature with its first sentence (`edit_file*(path, old, new, replace_all?)`: `?` optional, `*` asks the user
first), and the reply format. With the native protocol the tool list is left out entirely: the function schemas
attached to the request carry it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.prompt.context import PromptContext
    from cli_agent.tools import ToolSpec

LISTING_CHARS = {"full": 6000, "compact": 1200}
_PER_FOLDER = 12  # the listing's budget in characters (about 4 a token)

COMPACT_PREAMBLE = """\
You are cli-agent, a coding agent working on the files of this project. Use paths relative to the project root, \
exactly as the task or the file list names them.
Rules: read a file before you edit it and copy `old` exactly from it. Make the smallest change that does the task. \
If a call fails, read the error and fix the call. If a change is denied, stop and say so. When the task is done, \
say in one or two lines what you changed."""

COMPACT_JSON = """\
Reply with ONE JSON object and nothing else: {"tool": "<name>", "parameters": {...}, "terminate": false}
For example: {"tool": "read_file", "parameters": {"path": "README.md"}, "terminate": false}
In a JSON string, write a double quote as \\" and a line break as \\n, as in "new": "name = \\"y\\"\\nsize = 2".
"terminate": true ends the run after that call succeeds. When no tool is needed, reply in plain text: that is \
your final answer."""

COMPACT_NATIVE = "Call the attached functions; when no tool is needed, reply in plain text: that is your final answer."

# Folders and files that are build output, caches or vendored dependencies: never worth a prompt token.
JUNK_DIRS = frozenset({"__pycache__", "node_modules", ".venv", "venv", "env", ".tox", ".nox", "build", "dist",
                       ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", ".cache", "target", ".idea",
                       ".vscode", ".eggs", "htmlcov", ".next", ".gradle", "coverage", ".coverage"})
JUNK_SUFFIXES = (".pyc", ".pyo", ".o", ".so", ".a", ".dylib", ".dll", ".class", ".egg-info", ".whl", ".log",
                 ".tmp", ".swp", ".DS_Store", ".lock")
_SOURCE = (".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".rb", ".java", ".c", ".h", ".cpp", ".cs", ".sh")
_HEAD = ("README", "pyproject.toml", "package.json", "setup.py", "setup.cfg", "Cargo.toml", "go.mod", "Makefile",
         "AGENTS.md")


def _junk(path: str) -> bool:
    parts = path.rstrip("/").split("/")
    return any(p in JUNK_DIRS or p.endswith(".egg-info") for p in parts) or parts[-1].endswith(JUNK_SUFFIXES)


def _rank(path: str) -> tuple[int, int, str]:
    name = path.rsplit("/", 1)[-1]
    kind = 0 if name.startswith(_HEAD) else 1 if name.endswith(_SOURCE) else 2
    return path.count("/"), kind, path


def ranked_listing(paths: Iterable[str], budget_chars: int) -> tuple[list[str], int]:
    """The paths worth showing (files only: folders are implied), shallow and project files first, within the
    budget; and how many were left out (junk not counted: it is never shown)."""
    kept = sorted((p for p in paths if not p.endswith("/") and not _junk(p)), key=_rank)
    per_folder: dict[str, int] = {}
    first: list[str] = []
    rest: list[str] = []  # a folder's first files before any folder's many: one data folder can't fill the budget
    for path in kept:
        folder = path.rsplit("/", 1)[0] if "/" in path else ""
        per_folder[folder] = per_folder.get(folder, 0) + 1
        (first if per_folder[folder] <= _PER_FOLDER else rest).append(path)
    shown, used = [], 0
    for path in first + rest:
        if used + len(path) + 2 > budget_chars:
            break
        shown.append(path)
        used += len(path) + 2
    return sorted(shown), len(kept) - len(shown)


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]


def _signature(tool: ToolSpec) -> str:
    properties = tool.parameters.get("properties", {})
    required = set(tool.required_params())
    params = ", ".join(name if name in required else f"{name}?" for name in properties)
    star = "*" if tool.requires_approval else ""
    return f"- {tool.name}{star}({params}): {_first_sentence(tool.description)}"


def render_compact(ctx: PromptContext, tools: Sequence[ToolSpec], context_sections: list[str]) -> str:
    parts = [COMPACT_PREAMBLE.format(workspace=ctx.workspace_name)]
    if tools and ctx.protocol == "json":
        parts.append("Tools (? optional parameter, * asks the user first):\n" + "\n".join(map(_signature, tools)))
        parts.append(COMPACT_JSON)
    elif tools:
        parts.append(COMPACT_NATIVE)
    parts.extend(context_sections)
    return "\n\n".join(parts) + "\n"

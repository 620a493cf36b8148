"""The project's instruction files: `AGENTS.md` in every folder from the workspace root down to the folder the user
works in (where a folder has none, its `CLAUDE.md`, else its `GEMINI.md`), and the one of a deeper folder when the
model first reads or changes a file under it.

    found = read_instructions(workspace, working=Path.cwd())   # Instructions: .parts .files .note
    nested_instructions(workspace, "pkg/sub/mod.py", shown)     # [("pkg/AGENTS.md", text), ...] not shown yet

The system prompt's files share one bound (`INSTRUCTIONS_LIMIT` bytes): the root's first, then each folder's on the
way down; what does not fit is cut, and `note` says which files were cut or left out. Every read goes through the
workspace, so a protected or linked-out file is never read.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from cli_agent.contracts import dataclass

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

__all__ = ["INSTRUCTION_NAMES", "Instructions", "instruction_file", "nested_instructions", "read_instructions"]

INSTRUCTION_NAMES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md")  # the first a folder has is its instructions
INSTRUCTIONS_LIMIT = 16_000  # bytes of instructions in the system prompt, all files together
NESTED_LIMIT = 8_000  # bytes of one nested file shown next to a tool's result


@dataclass(frozen=True)
class Instructions:
    parts: tuple[tuple[str, str], ...] = ()  # (workspace-relative path, text) of each file read, root first
    note: str = ""  # what the bound cut or left out

    @property
    def files(self) -> tuple[str, ...]:
        return tuple(path for path, _ in self.parts)

    def __bool__(self) -> bool:
        return bool(self.parts)


def instruction_file(workspace: Workspace, folder: str) -> str | None:
    """The instruction file of `folder` (workspace-relative, "" or "." for the root): its AGENTS.md, else CLAUDE.md,
    else GEMINI.md; None when it has none."""
    base = "" if folder in ("", ".") else folder.rstrip("/") + "/"
    for name in INSTRUCTION_NAMES:
        try:
            if workspace.exists(base + name) and not workspace.is_dir(base + name):
                return base + name
        except Exception:  # (an odd or refused name is no instruction file)
            continue
    return None


def folders_down(workspace: Workspace, working: Path | None) -> list[str]:
    """The workspace-relative folders from the root ("") down to `working` (the root alone when it is outside)."""
    folders = [""]
    if working is None:
        return folders
    try:
        rel = Path(working).resolve().relative_to(workspace.root.resolve())
    except ValueError:
        return folders
    parts = rel.parts
    folders += ["/".join(parts[:i]) for i in range(1, len(parts) + 1)]
    return folders


def read_instructions(workspace: Workspace, working: Path | None = None,
                      limit: int = INSTRUCTIONS_LIMIT) -> Instructions:
    """The instruction files from the root down to `working`, within `limit` bytes together."""
    files = [f for f in (instruction_file(workspace, d) for d in folders_down(workspace, working)) if f]
    parts: list[tuple[str, str]] = []
    left = limit
    cut: list[str] = []
    for index, rel in enumerate(files):
        text = _read(workspace, rel, limit)
        if text is None or not text.strip():
            continue
        if left <= 0:
            cut += [f"{f} left out" for f in files[index:]]
            break
        text = text.strip()
        data = text.encode("utf-8")
        if len(data) > left:
            cut.append(f"{rel} cut after {left:,} of {len(data):,} bytes")
            text = data[:left].decode("utf-8", errors="ignore")
        left -= len(text.encode("utf-8"))
        parts.append((rel, text.strip()))
    note = f"[instructions over {limit:,} bytes: {'; '.join(cut)}]" if cut else ""
    return Instructions(tuple(parts), note)


def nested_instructions(workspace: Workspace, path: str, known: Iterable[str],
                        working: Path | None = None) -> list[tuple[str, str]]:
    """The instruction files of the folders holding `path` (below the root, nearest last) that are neither in the
    system prompt (the folders from the root down to `working`) nor in `known` (shown already), with their text."""
    known = set(known)
    in_prompt = set(folders_down(workspace, working))
    out: list[tuple[str, str]] = []
    parents = [str(p) for p in PurePosixPath(path).parents if str(p) not in ("", ".")]
    for folder in reversed(parents):
        if folder in in_prompt:
            continue
        rel = instruction_file(workspace, folder)
        if rel is None or rel in known:
            continue
        text = _read(workspace, rel, NESTED_LIMIT)
        if text is not None and text.strip():
            out.append((rel, text.strip()))
    return out


def _read(workspace: Workspace, rel: str, limit: int) -> str | None:
    try:
        data = workspace.read_bytes(rel, limit=limit + 1)
    except Exception:  # (an unreadable instruction file leaves the prompt without it, nothing more)
        return None
    text = data.decode("utf-8", errors="replace")
    if len(data) > limit:
        text = data[:limit].decode("utf-8", errors="ignore") + f"\n[... {rel} cut at {limit:,} bytes]"
    return text

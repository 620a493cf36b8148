"""A planned file change: what a mutating tool would write, computed before anything is written.

Mutating tools return a `Change` instead of writing. The user approves the change itself (its `digest` binds the
approval to the exact bytes), and `Workspace.apply` writes it only if the file on disk is still `before`.
"""

from __future__ import annotations

import difflib
import hashlib
from dataclasses import dataclass
from typing import Any, Literal

__all__ = ["Change", "ChangeKind", "sha_of"]

ChangeKind = Literal["create", "edit", "write", "delete"]


def sha_of(data: bytes | None) -> str:
    """The sha256 of a file's bytes, "-" for no file."""
    return "-" if data is None else hashlib.sha256(data).hexdigest()


@dataclass(frozen=True)
class Change:
    tool: str
    kind: ChangeKind
    path: str  # workspace-relative, POSIX separators
    before: bytes | None  # None: the file does not exist yet
    after: bytes | None  # None: the file is deleted
    mode: int | None = None  # permission bits the result keeps (or gets, for a new file)
    encoding: str = "utf-8"  # how before/after decode for display
    summary: str = ""  # one line, e.g. "1 replacement, +3 -1 lines"

    @property
    def digest(self) -> str:
        """sha256 over what the change is: tool, kind, path, before and after."""
        h = hashlib.sha256()
        for part in (self.tool, self.kind, self.path, sha_of(self.before), sha_of(self.after)):
            h.update(part.encode())
            h.update(b"\0")
        return h.hexdigest()

    def text(self, data: bytes | None) -> str:
        if data is None:
            return ""
        return data.decode(self.encoding, errors="replace")

    def diff(self, context: int = 3) -> str:
        """A unified diff of before → after (empty for an unchanged file)."""
        a = self.text(self.before).splitlines(keepends=True)
        b = self.text(self.after).splitlines(keepends=True)
        lines = difflib.unified_diff(a, b, fromfile=f"a/{self.path}" if self.before is not None else "/dev/null",
                                     tofile=f"b/{self.path}" if self.after is not None else "/dev/null",
                                     n=context)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in lines)

    def stats(self) -> tuple[int, int]:
        """(lines added, lines removed)."""
        added = removed = 0
        for line in self.diff(context=0).splitlines():
            if line.startswith("+") and not line.startswith("+++"):
                added += 1
            elif line.startswith("-") and not line.startswith("---"):
                removed += 1
        return added, removed

    def to_dict(self) -> dict[str, Any]:
        """What the trace keeps: the change's identity, not its bytes."""
        added, removed = self.stats()
        return {"tool": self.tool, "kind": self.kind, "path": self.path, "digest": self.digest,
                "before_sha256": sha_of(self.before), "after_sha256": sha_of(self.after),
                "summary": self.summary, "added": added, "removed": removed}

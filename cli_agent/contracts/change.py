"""A planned file change: what a mutating tool would write, computed before anything is written.

Mutating tools return a `Change` instead of writing. The user approves the change itself (its `digest` binds the
approval to the exact bytes), and `Workspace.apply` writes it only if the file on disk is still `before`.

Its diff and line counts look only at the lines that changed (`contracts.hunks`): the regions the tool names, or
the one between the common prefix and suffix, so a one-line edit of a large file costs about one pass over it.
"""

from __future__ import annotations

import codecs
import difflib
import functools
import hashlib
from dataclasses import field
from typing import Any, Literal

from cli_agent.contracts import hunks
from cli_agent.contracts.hunks import Region
from cli_agent.contracts.records import dataclass

__all__ = ["Change", "ChangeKind", "Staged", "sha_of"]

SHOWN_CHARS = 100_000  # a change's text or diff a trace keeps, to draw it again on a resume

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
    regions: tuple[Region, ...] | None = None  # the lines the tool changed, when it knows (display only)
    warnings: tuple[str, ...] = ()  # what to weigh before applying it that is not an error (code made unreachable)

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
        head = [f"--- a/{self.path}\n" if self.before is not None else "--- /dev/null\n",
                f"+++ b/{self.path}\n" if self.after is not None else "+++ /dev/null\n"]
        body = list(self._hunks(context))
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
                       for line in (head + body if body else []))

    def _hunks(self, context: int) -> Any:
        if self.before is None or self.after is None:  # a whole file appears or goes
            a = self.text(self.before).splitlines(keepends=True)
            b = self.text(self.after).splitlines(keepends=True)
            return (line for line in difflib.unified_diff(a, b, n=context) if not line.startswith(("---", "+++")))
        before, after, encoding = self._comparable()
        regions = self.regions if self.regions is not None else hunks.trimmed(before, after)
        return hunks.unified(before, after, regions, context, encoding)

    def _comparable(self) -> tuple[Any, Any, str]:
        """before and after as bytes when `\\n` is a byte of their encoding, else as text."""
        assert self.before is not None and self.after is not None
        if _byte_lines(self.encoding):
            return self.before, self.after, self.encoding
        return self.text(self.before), self.text(self.after), self.encoding

    def stats(self) -> tuple[int, int]:
        """(lines added, lines removed)."""
        return self._stats

    @functools.cached_property
    def _stats(self) -> tuple[int, int]:
        if self.before is None or self.after is None:
            text = self.text(self.after if self.before is None else self.before)
            lines = text.count("\n") + (not text.endswith("\n") and bool(text))
            return (lines, 0) if self.before is None else (0, lines)
        before, after, encoding = self._comparable()
        regions = self.regions if self.regions is not None else hunks.trimmed(before, after)
        return hunks.counts(before, after, regions, encoding)

    def to_dict(self) -> dict[str, Any]:
        """What the trace keeps: the change's identity and what it showed (`shown`: a created file's text, a deleted
        one's, else the diff; left out past `SHOWN_CHARS`), not its bytes."""
        added, removed = self.stats()
        out = {"tool": self.tool, "kind": self.kind, "path": self.path, "digest": self.digest,
               "before_sha256": sha_of(self.before), "after_sha256": sha_of(self.after),
               "summary": self.summary, "added": added, "removed": removed}
        shown = self._shown()
        return out | ({"shown": shown} if shown is not None else {})

    def _shown(self) -> str | None:
        whole = self.after if self.kind == "create" else self.before if self.kind == "delete" else None
        if whole is not None and len(whole) > SHOWN_CHARS * 4:
            return None
        text = self.text(whole) if whole is not None else self.diff()
        return text if len(text) <= SHOWN_CHARS else None

    @staticmethod
    def from_dict(data: Any) -> Change | None:
        """The change a trace recorded, as it was shown (`Recorded`); None when the trace kept only its identity."""
        if not isinstance(data, dict) or not isinstance(data.get("shown"), str):
            return None
        kind, shown = data.get("kind"), data["shown"]
        if kind not in ("create", "edit", "write", "delete") or not isinstance(data.get("path"), str):
            return None
        stats = (data.get("added"), data.get("removed"))
        return Recorded(str(data.get("tool", "")), kind, data["path"],
                        shown.encode() if kind == "delete" else None, shown.encode() if kind == "create" else None,
                        summary=str(data.get("summary", "")), shown=shown,
                        recorded=stats if all(isinstance(n, int) for n in stats) else (0, 0))  # type: ignore[arg-type]


@dataclass(frozen=True)
class Recorded(Change):
    """A change read back from a trace: what it showed (a created or deleted file's text, else the diff) and its
    line counts, for drawing it again. It cannot be applied: an edit's bytes around its diff were not kept."""

    shown: str = ""
    recorded: tuple[int, int] = (0, 0)

    def diff(self, context: int = 3) -> str:
        return self.shown if self.kind in ("edit", "write") else super().diff(context)

    def stats(self) -> tuple[int, int]:
        return self.recorded


@functools.cache
def _byte_lines(encoding: str) -> bool:
    """Whether `\\n` is the byte 0x0A of `encoding` and never part of another character."""
    try:
        name = codecs.lookup(encoding).name
    except LookupError:
        return False
    return name in ("utf-8", "utf-8-sig", "ascii", "latin-1", "iso8859-1", "cp1252", "shift_jis")


@dataclass(frozen=True)
class Staged:
    """Several changes approved and applied as one (a command's change set, a rename), with the result the model
    gets. Nothing is written until the dispatcher applies it, in order, each change through `Workspace.apply`."""

    data: dict[str, Any] = field(default_factory=dict)
    changes: tuple[Change, ...] = ()
    removed_dirs: tuple[str, ...] = ()  # folders to remove once deleted from, if then empty (deepest first)
    refused: tuple[tuple[str, str], ...] = ()  # (path, why) changed by the command but never to be applied

    @property
    def kind(self) -> ChangeKind:
        """The kind the approval policy weighs: a delete if any change deletes, else an edit."""
        if any(c.kind == "delete" for c in self.changes):
            return "delete"
        return "create" if all(c.kind == "create" for c in self.changes) else "edit"

    def paths(self) -> list[str]:
        return [c.path for c in self.changes]

"""The undo journal: before cli-agent changes a file, what the file was is on disk outside the workspace.

Layout under `paths.user_state_dir()/journal/` (format 1; a format change gets a named migration):

    blobs/ab/abcd…           before-images named by their sha256, so one content is stored once (mode 0600)
    <key>/journal.jsonl      one workspace's journal: a header line, then one JSON object per line
    <key>/lock               flock'ed while a line is appended, a turn is numbered, or the journal is pruned

`<key>` is the first 16 hex digits of the sha256 of the workspace's real path. The lines:

    {"format": 1, "type": "journal_header", "workspace": "/real/path", "time": …}
    {"type": "change", "turn": 3, "session": "ab12cd34", "seq": 1, "time": …, "tool": "edit_file", "kind": "edit",
     "path": "src/a.py", "before": sha256 | null, "mode": 420 | null, "after": sha256 | null, "dirs": [...],
     "prompt": "what the user asked"}                                   (prompt: on a turn's first line only)
    {"type": "undone", "turn": 3, "time": …, "files": [...]}
    {"type": "failed", "turn": 3, "seq": 2, "time": …}     the write after that entry failed: it never happened

`Journal.record` is the `Workspace`'s `before_write` hook: the before-image is written (temp file, fsync, rename,
folder fsync) and the line appended and fsynced before `apply` writes a byte; if either fails it raises and the
change does not happen. A line cut short by a crash has no newline and its change never happened (the write
follows the fsync): readers skip it and the next append starts a new line. `dirs` are the folders the change
creates, removed again by undo when they are left empty.

A turn is one Agent run: `begin_turn(session)` (called by `Session.run`) makes the next change open a new turn,
numbered per workspace under the lock, so two sessions in one workspace never share a number.

This module stores and records (`Journal`, pruning, `collect_blobs`); undoing a turn and showing the journal
(`cli-agent undo`, `/undo`) are in `cli_agent.history.undo`, which reverts under `exclusive()` and then `mark_undone`s.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import dataclass, errors
from cli_agent.fs import atomic, locate_in, paths

if TYPE_CHECKING:
    from cli_agent.contracts import Change

__all__ = ["Journal", "Turn"]

FORMAT = 1
KEEP_TURNS = 200  # turns kept per workspace; older ones are pruned
PRUNE_EVERY = 25  # turns between prunes
PROMPT_KEPT = 200  # characters of a turn's prompt the journal keeps
BLOB_GRACE_S = 3600.0  # an unreferenced blob younger than this may belong to a change being recorded


@dataclass(frozen=True)
class Entry:
    """One recorded change: the file before it (sha256 of the blob, mode; None: it did not exist) and after."""

    turn: int
    session: str
    seq: int
    time: float
    tool: str
    kind: str
    path: str
    before: str | None
    mode: int | None
    after: str | None
    dirs: tuple[str, ...] = ()
    prompt: str = ""  # the turn's first entry: what the user asked (absent in older journals)


@dataclass(frozen=True)
class Turn:
    number: int
    session: str
    time: float
    changes: tuple[Entry, ...]
    undone: bool = False

    @property
    def prompt(self) -> str:
        return next((e.prompt for e in self.changes if e.prompt), "")


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _replace(folder: Path, name: str, data: bytes) -> None:
    """`data` as `folder/name` (mode 0600), atomically: a temporary file, fsync, rename, folder fsync."""
    fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        atomic.write(fd, name, data, 0o600, create=False)
    finally:
        os.close(fd)


class Journal:
    def __init__(self, workspace: str | Path, home: Path | None = None) -> None:
        self.root = Path(os.path.realpath(workspace))
        self.home = home if home is not None else paths.user_state_dir() / "journal"
        self.dir = self.home / hashlib.sha256(os.fsencode(self.root)).hexdigest()[:16]
        self.file = self.dir / "journal.jsonl"
        self._session = ""
        self._turn: int | None = None  # None: the next change opens a new turn
        self._seq = 0
        self._prompt = ""
        self._mutex = threading.Lock()

    # -- recording -------------------------------------------------------------------------------------------

    def begin_turn(self, session: str = "", prompt: str = "") -> None:
        """The next change opens a new turn; `prompt` (what the user asked, first 200 characters kept) goes with
        its first line, for `/undo list`."""
        with self._mutex:
            self._session, self._turn, self._seq = session, None, 0
            self._prompt = " ".join(prompt.split())[:PROMPT_KEPT]

    def record(self, change: Change) -> Callable[[], None]:
        """The `before_write` hook: the before-image and the entry on disk, fsynced, or an exception. Returns what
        takes the entry back when the write then fails (a full disk, a read-only file system)."""
        with self._mutex:
            before_mode, dirs = self._inspect(change.path)
            before = self._put_blob(change.before) if change.before is not None else None
            with self._locked():
                if self._turn is None:
                    self._turn = self._last_turn() + 1
                    self._seq = 0
                    if self._turn % PRUNE_EVERY == 0:
                        self._prune(self._turn)
                self._seq += 1
                turn, seq = self._turn, self._seq
                self._append({"type": "change", "turn": turn, "session": self._session, "seq": seq,
                              "time": round(time.time(), 3), "tool": change.tool, "kind": change.kind,
                              "path": change.path, "before": before, "mode": before_mode,
                              "after": _sha(change.after) if change.after is not None else None,
                              "dirs": list(dirs)} | ({"prompt": self._prompt} if self._seq == 1 and self._prompt
                                                   else {}))
        return lambda: self._retract(turn, seq)

    def _retract(self, turn: int, seq: int) -> None:
        """The change `seq` of `turn` did not happen after all: a line that says so (readers drop the entry)."""
        with self._locked():
            self._append({"type": "failed", "turn": turn, "seq": seq, "time": round(time.time(), 3)})

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        """Held (shared) while a turn runs, so `undo` never reverts a turn that is still adding changes."""
        fd = self._turn_lock_fd()
        try:
            fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            os.close(fd)

    @contextlib.contextmanager
    def no_turn_running(self) -> Iterator[None]:
        """Held (exclusive) by `undo`; a turn running in this workspace, in any process, is an error."""
        fd = self._turn_lock_fd()
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                raise errors.CliAgentError(f"a turn is running in {self.root} right now; undo when it has "
                                           f"finished (nothing was changed)") from None
            yield
        finally:
            os.close(fd)

    def _turn_lock_fd(self) -> int:
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        return os.open(self.dir / "turn.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)

    @contextlib.contextmanager
    def exclusive(self) -> Iterator[None]:
        """No other change recorded meanwhile, by this process or another: for `cli_agent.history.undo.undo`."""
        with self._mutex, self._locked():
            yield

    def mark_undone(self, turn: int, files: list[str]) -> None:
        """Append that `turn` was undone (`files` are the paths reverted); the caller holds `exclusive()`."""
        self._append({"type": "undone", "turn": turn, "time": round(time.time(), 3), "files": files})

    def _inspect(self, rel: str) -> tuple[int | None, tuple[str, ...]]:
        """The file's current permission bits (None when missing) and the folders a write would create."""
        with locate_in(str(self.root), tuple(rel.split("/")), follow=False) as loc:
            mode = loc.stat.st_mode & 0o7777 if loc.stat is not None else None
            made = [loc.dir_parts + loc.tail[:i] for i in range(1, len(loc.tail))]
        return mode, tuple("/".join(p) for p in made)

    def _put_blob(self, data: bytes) -> str:
        sha = _sha(data)
        folder = self.home / "blobs" / sha[:2]
        path = folder / sha
        with contextlib.suppress(FileNotFoundError):
            os.utime(path)  # there already: fresh again, so a concurrent prune leaves it alone
            return sha
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        _replace(folder, sha, data)
        return sha

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        created = not self.dir.exists()
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created:
            atomic.fsync_dir(self.dir.parent)
        fd = os.open(self.dir / "lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            yield
        finally:
            os.close(fd)

    def _append(self, record: dict[str, Any]) -> None:
        line = json.dumps(record, separators=(",", ":")).encode() + b"\n"
        fd = os.open(self.file, os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            size = os.fstat(fd).st_size
            if size and b"\n" not in os.pread(fd, min(size, 4096), 0):  # a header cut short at creation
                os.ftruncate(fd, 0)
                size = 0
            if size == 0:
                line = self._header() + line
            elif os.pread(fd, 1, size - 1) != b"\n":
                line = b"\n" + line  # after a torn line: start a new one
            view = memoryview(line)
            while view:
                view = view[os.write(fd, view):]
            os.fsync(fd)
        finally:
            os.close(fd)
        if size == 0:
            atomic.fsync_dir(self.dir)

    def _header(self) -> bytes:
        header = {"format": FORMAT, "type": "journal_header", "workspace": str(self.root),
                  "time": round(time.time(), 3)}
        return json.dumps(header).encode() + b"\n"

    # -- reading ---------------------------------------------------------------------------------------------

    def _records(self) -> list[dict[str, Any]]:
        """Every complete line after the header; a torn or damaged line is skipped."""
        try:
            data = self.file.read_bytes()
        except FileNotFoundError:
            return []
        if b"\n" not in data:
            return []  # being created (or cut short while created): no entry yet
        lines = data.split(b"\n")
        try:
            header = json.loads(lines[0])
        except ValueError:
            raise errors.CliAgentError(f"the undo journal {self.file} has a damaged header; move it away") from None
        if header.get("format") != FORMAT:
            raise errors.CliAgentError(f"the undo journal {self.file} has format {header.get('format')!r}; this "
                                       f"cli-agent reads format {FORMAT}")
        out = []
        for raw in lines[1:]:
            with contextlib.suppress(ValueError):
                record = json.loads(raw)
                if isinstance(record, dict):
                    out.append(record)
        return out

    def _last_turn(self) -> int:
        return max((r.get("turn", 0) for r in self._records() if isinstance(r.get("turn"), int)), default=0)

    def turns(self) -> list[Turn]:
        """Every turn the journal holds, oldest first."""
        changes: dict[int, list[Entry]] = {}
        undone: set[int] = set()
        failed: set[tuple[int, int]] = set()
        for r in self._records():
            try:
                if r.get("type") == "undone":
                    undone.add(int(r["turn"]))
                elif r.get("type") == "failed":
                    failed.add((int(r["turn"]), int(r["seq"])))
                elif r.get("type") == "change":
                    changes.setdefault(int(r["turn"]), []).append(_entry(r))
            except (KeyError, TypeError, ValueError):
                continue  # a damaged line
        kept = {n: [e for e in es if (n, e.seq) not in failed] for n, es in changes.items()}
        return [Turn(n, es[0].session, es[0].time, tuple(sorted(es, key=lambda e: e.seq)), n in undone)
                for n, es in sorted(kept.items()) if es]

    def blob(self, sha: str) -> bytes:
        try:
            data = (self.home / "blobs" / sha[:2] / sha).read_bytes()
        except OSError as exc:
            raise errors.CliAgentError(f"the saved copy {sha[:12]} is missing from the undo journal "
                                       f"({exc.strerror})") from None
        if _sha(data) != sha:
            raise errors.CliAgentError(f"the saved copy {sha[:12]} in the undo journal is damaged")
        return data

    # -- bounding the size -----------------------------------------------------------------------------------

    def _prune(self, newest: int) -> None:
        """Keep the last KEEP_TURNS turns up to `newest` (caller holds the lock); then collect blobs."""
        records = self._records()
        kept = [r for r in records if isinstance(r.get("turn"), int) and r["turn"] > newest - KEEP_TURNS]
        if len(kept) < len(records):
            lines = b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in kept)
            _replace(self.dir, self.file.name, self._header() + lines)
        collect_blobs(self.home)


def collect_blobs(home: Path, grace_s: float = BLOB_GRACE_S) -> int:
    """Delete the blobs no workspace's journal refers to (older than `grace_s`); returns how many went."""
    used: set[str] = set()
    for journal in home.glob("*/journal.jsonl"):
        with contextlib.suppress(OSError):
            for raw in journal.read_bytes().split(b"\n"):
                with contextlib.suppress(ValueError, AttributeError):
                    sha = json.loads(raw).get("before")
                    if isinstance(sha, str):
                        used.add(sha)
    removed = 0
    cutoff = time.time() - grace_s
    for blob in home.glob("blobs/*/*"):
        with contextlib.suppress(OSError):
            if blob.name not in used and blob.stat().st_mtime < cutoff:
                blob.unlink()
                removed += 1
    return removed


def _entry(r: dict[str, Any]) -> Entry:
    return Entry(turn=int(r["turn"]), session=str(r.get("session", "")), seq=int(r.get("seq", 0)),
                 time=float(r.get("time", 0)), tool=str(r["tool"]), kind=str(r["kind"]), path=str(r["path"]),
                 before=r.get("before"), mode=r.get("mode"), after=r.get("after"),
                 dirs=tuple(str(d) for d in r.get("dirs") or ()), prompt=str(r.get("prompt") or ""))

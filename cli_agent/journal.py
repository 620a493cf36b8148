"""The undo journal: before cli-agent changes a file, what the file was is on disk outside the workspace.

Layout under `paths.user_state_dir()/journal/` (format 1; a format change gets a named migration):

    blobs/ab/abcd…           before-images named by their sha256, so one content is stored once (mode 0600)
    <key>/journal.jsonl      one workspace's journal: a header line, then one JSON object per line
    <key>/lock               flock'ed while a line is appended, a turn is numbered, or the journal is pruned

`<key>` is the first 16 hex digits of the sha256 of the workspace's real path. The lines:

    {"format": 1, "type": "journal_header", "workspace": "/real/path", "time": …}
    {"type": "change", "turn": 3, "session": "ab12cd34", "seq": 1, "time": …, "tool": "edit_file", "kind": "edit",
     "path": "src/a.py", "before": sha256 | null, "mode": 420 | null, "after": sha256 | null, "dirs": [...]}
    {"type": "undone", "turn": 3, "time": …, "files": [...]}

`Journal.record` is the `Workspace`'s `before_write` hook: the before-image is written (temp file, fsync, rename,
folder fsync) and the line appended and fsynced before `apply` writes a byte; if either fails it raises and the
change does not happen. A line cut short by a crash has no newline and its change never happened (the write
follows the fsync): readers skip it and the next append starts a new line. `dirs` are the folders the change
creates, removed again by undo when they are left empty.

A turn is one Agent run: `begin_turn(session)` (called by `Session.run`) makes the next change open a new turn,
numbered per workspace under the lock, so two sessions in one workspace never share a number.

`undo` reverts one turn, newest change first, byte for byte and mode included, through a `Workspace` (containment,
no links, no hard-linked targets, `apply`'s "unchanged since read" check). It is the user's action, so user locks
do not stop it; protected paths still do (the agent can never have changed them). Before anything is written,
every file is checked to be as the agent left it (the recorded after-sha256): if one is not, nothing is reverted
and the error names it. Git's index and refs, and every file the turn did not change, are never touched.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import secrets
import stat
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent import errors

if TYPE_CHECKING:
    from cli_agent.change import Change, ChangeKind
    from cli_agent.sandbox import Workspace
    from cli_agent.ui.commands import CommandContext, CommandRegistry

__all__ = ["FORMAT", "Entry", "Journal", "Turn", "Undone", "register_repl_commands"]

FORMAT = 1
KEEP_TURNS = 200  # turns kept per workspace; older ones are pruned
PRUNE_EVERY = 25  # turns between prunes
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


@dataclass(frozen=True)
class Turn:
    number: int
    session: str
    time: float
    changes: tuple[Entry, ...]
    undone: bool = False


@dataclass(frozen=True)
class Undone:
    turn: int
    done: tuple[str, ...]  # one line per file: "restored a.py", "removed new.txt", "recreated old.txt"


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class Journal:
    def __init__(self, workspace: str | Path, home: Path | None = None) -> None:
        from cli_agent import paths

        self.root = Path(os.path.realpath(workspace))
        self.home = home if home is not None else paths.user_state_dir() / "journal"
        self.dir = self.home / hashlib.sha256(os.fsencode(self.root)).hexdigest()[:16]
        self.file = self.dir / "journal.jsonl"
        self._session = ""
        self._turn: int | None = None  # None: the next change opens a new turn
        self._seq = 0
        self._mutex = threading.Lock()

    # -- recording -------------------------------------------------------------------------------------------

    def begin_turn(self, session: str = "") -> None:
        with self._mutex:
            self._session, self._turn, self._seq = session, None, 0

    def record(self, change: Change) -> None:
        """The `before_write` hook: the before-image and the entry on disk, fsynced, or an exception."""
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
                self._append({"type": "change", "turn": self._turn, "session": self._session, "seq": self._seq,
                              "time": round(time.time(), 3), "tool": change.tool, "kind": change.kind,
                              "path": change.path, "before": before, "mode": before_mode,
                              "after": _sha(change.after) if change.after is not None else None,
                              "dirs": list(dirs)})

    def _inspect(self, rel: str) -> tuple[int | None, tuple[str, ...]]:
        """The file's current permission bits (None when missing) and the folders a write would create."""
        from cli_agent.beneath import locate, open_dir

        parts = tuple(rel.split("/"))
        root_fd = open_dir(str(self.root))
        try:
            with locate(root_fd, (str(self.root),), parts, follow=False) as loc:
                mode = loc.stat.st_mode & 0o7777 if loc.stat is not None else None
                made = [loc.dir_parts + loc.tail[:i] for i in range(1, len(loc.tail))]
        finally:
            os.close(root_fd)
        return mode, tuple("/".join(p) for p in made)

    def _put_blob(self, data: bytes) -> str:
        sha = _sha(data)
        folder = self.home / "blobs" / sha[:2]
        path = folder / sha
        with contextlib.suppress(FileNotFoundError):
            os.utime(path)  # there already: fresh again, so a concurrent prune leaves it alone
            return sha
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = folder / f".tmp-{secrets.token_hex(8)}"
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
                os.fsync(fd)
            finally:
                os.close(fd)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        _fsync_dir(folder)
        return sha

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        import fcntl

        created = not self.dir.exists()
        self.dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        if created:
            _fsync_dir(self.dir.parent)
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
            _fsync_dir(self.dir)

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
        for r in self._records():
            try:
                if r.get("type") == "undone":
                    undone.add(int(r["turn"]))
                elif r.get("type") == "change":
                    changes.setdefault(int(r["turn"]), []).append(_entry(r))
            except (KeyError, TypeError, ValueError):
                continue  # a damaged line
        return [Turn(n, es[0].session, es[0].time, tuple(sorted(es, key=lambda e: e.seq)), n in undone)
                for n, es in sorted(changes.items())]

    def blob(self, sha: str) -> bytes:
        try:
            data = (self.home / "blobs" / sha[:2] / sha).read_bytes()
        except OSError as exc:
            raise errors.CliAgentError(f"the saved copy {sha[:12]} is missing from the undo journal "
                                       f"({exc.strerror})") from None
        if _sha(data) != sha:
            raise errors.CliAgentError(f"the saved copy {sha[:12]} in the undo journal is damaged")
        return data

    # -- undoing ---------------------------------------------------------------------------------------------

    def undo(self, turn: int | None = None) -> Undone:
        """Revert `turn` (default: the newest turn not undone yet); see the module docstring."""
        from cli_agent.envelope import ToolError
        from cli_agent.sandbox import DEFAULT_PROTECTED, Workspace

        workspace = Workspace(self.root, protected=DEFAULT_PROTECTED)
        if not self.file.exists():
            raise errors.UsageError(f"nothing to undo in {self.root}: cli-agent has not changed a file here")
        with self._mutex, self._locked():
            target = self._pick(turn)
            plan = self._plan(workspace, target)
            done: list[str] = []
            for change in plan:
                try:
                    workspace.apply(change)
                except ToolError as exc:  # someone changed the file since it was checked, just now
                    shown = "; ".join(done) or "nothing"
                    raise errors.CliAgentError(f"undo of turn {target.number} stopped at {change.path}: "
                                               f"{exc.message} (done so far: {shown}); run undo again to "
                                               f"finish") from None
                done.append({"delete": "removed", "create": "recreated"}.get(change.kind, "restored")
                            + f" {_shown(change.path)}")
            self._remove_empty_dirs(target)
            self._append({"type": "undone", "turn": target.number, "time": round(time.time(), 3),
                          "files": sorted({c.path for c in plan})})
        return Undone(target.number, tuple(done))

    def _pick(self, turn: int | None) -> Turn:
        turns = self.turns()
        if turn is None:
            left = [t for t in turns if not t.undone]
            if not left:
                raise errors.UsageError(f"nothing to undo in {self.root}: every turn in the journal is undone "
                                        f"already (see cli-agent undo --list)")
            return left[-1]
        found = next((t for t in turns if t.number == turn), None)
        if found is None:
            raise errors.UsageError(f"turn {turn} is not in the undo journal of {self.root} (see cli-agent undo "
                                    f"--list)")
        if found.undone:
            raise errors.UsageError(f"turn {turn} was undone already")
        return found

    def _plan(self, workspace: Workspace, target: Turn) -> list[Change]:
        """The changes that revert `target`, checked against the files as they are now; nothing is written."""
        from cli_agent.change import Change
        from cli_agent.envelope import ToolError

        now: dict[str, bytes | None] = {}
        plan: list[Change] = []
        for entry in reversed(target.changes):
            if entry.path not in now:
                try:
                    now[entry.path] = self._current(workspace, entry.path)
                except ToolError as exc:
                    raise errors.CliAgentError(f"undo refused: {entry.path} can't be read ({exc.message}); "
                                               f"nothing was changed") from None
            current = now[entry.path]
            sha = _sha(current) if current is not None else None
            if sha == entry.before:
                continue  # never written, or reverted by an earlier, interrupted undo
            if sha != entry.after:
                raise errors.CliAgentError(
                    f"undo refused: {entry.path} changed since the agent wrote it (turn {target.number}, "
                    f"{entry.tool}); nothing was changed. Revert it by hand, or undo another turn")
            restored = self.blob(entry.before) if entry.before is not None else None
            kind: ChangeKind = "delete" if restored is None else "create" if current is None else "write"
            plan.append(Change(tool="undo", kind=kind, path=entry.path, before=current, after=restored,
                               mode=entry.mode, summary=f"undo turn {target.number}"))
            now[entry.path] = restored
        return plan

    @staticmethod
    def _current(workspace: Workspace, rel: str) -> bytes | None:
        """The file's bytes now (None: missing); a link anywhere on the way or a special file is a ToolError."""
        from cli_agent.beneath import locate, open_dir, open_regular
        from cli_agent.tools.files import FILE_MAX

        parts = workspace.relative(rel).split("/")
        root_fd = open_dir(str(workspace.root))
        try:
            with locate(root_fd, (str(workspace.root),), tuple(parts), follow=False) as loc:
                if loc.stat is None:
                    return None
                fd = open_regular(loc)
        finally:
            os.close(root_fd)
        with os.fdopen(fd, "rb") as fh:
            return fh.read(FILE_MAX + 1)

    def _remove_empty_dirs(self, target: Turn) -> None:
        """rmdir (never recursive) the folders the turn's changes created, deepest first, if they are empty."""
        from cli_agent.beneath import locate, open_dir

        dirs = sorted({d for e in target.changes for d in e.dirs}, key=lambda d: -d.count("/"))
        for rel in dirs:
            parts = tuple(rel.split("/"))
            with contextlib.suppress(Exception):
                root_fd = open_dir(str(self.root))
                try:
                    with locate(root_fd, (str(self.root),), parts, follow=False) as loc:
                        if loc.stat is not None and loc.tail and stat.S_ISDIR(loc.stat.st_mode):
                            os.rmdir(loc.tail[-1], dir_fd=loc.dir_fd)
                finally:
                    os.close(root_fd)

    # -- bounding the size -----------------------------------------------------------------------------------

    def _prune(self, newest: int) -> None:
        """Keep the last KEEP_TURNS turns up to `newest` (caller holds the lock); then collect blobs."""
        records = self._records()
        kept = [r for r in records if isinstance(r.get("turn"), int) and r["turn"] > newest - KEEP_TURNS]
        if len(kept) < len(records):
            body = self._header() + b"".join(json.dumps(r, separators=(",", ":")).encode()
                                             + b"\n" for r in kept)
            tmp = self.dir / f".tmp-{secrets.token_hex(8)}"
            try:
                with open(tmp, "wb") as fh:
                    fh.write(body)
                    fh.flush()
                    os.fsync(fh.fileno())
                os.replace(tmp, self.file)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp)
            _fsync_dir(self.dir)
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


def _shown(path: str) -> str:
    """A path for the terminal: a name that is not UTF-8 (surrogate escapes) shows as \\udcXX, never crashes."""
    return path.encode("utf-8", "backslashreplace").decode("utf-8")


def _entry(r: dict[str, Any]) -> Entry:
    return Entry(turn=int(r["turn"]), session=str(r.get("session", "")), seq=int(r.get("seq", 0)),
                 time=float(r.get("time", 0)), tool=str(r["tool"]), kind=str(r["kind"]), path=str(r["path"]),
                 before=r.get("before"), mode=r.get("mode"), after=r.get("after"),
                 dirs=tuple(str(d) for d in r.get("dirs") or ()))


# -- showing it ----------------------------------------------------------------------------------------------------

def render_turns(turns: list[Turn]) -> str:
    """`cli-agent undo --list`: each turn with its changes (time, tool, kind, path), oldest first."""
    from cli_agent.ui.escape import escape_for_terminal as esc

    if not turns:
        return "the undo journal of this workspace is empty"
    lines = []
    for t in turns:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(t.time))
        lines.append(f"turn {t.number}  {stamp}  session {t.session or '-'}" + ("  (undone)" if t.undone else ""))
        for e in t.changes:
            lines.append(f"  {time.strftime('%H:%M:%S', time.localtime(e.time))}  {e.tool:<12} {e.kind:<6} "
                         f"{esc(_shown(e.path))}")
    return "\n".join(lines)


def turns_json(turns: list[Turn]) -> list[dict[str, Any]]:
    return [{"turn": t.number, "session": t.session, "time": t.time, "undone": t.undone,
             "changes": [{"time": e.time, "tool": e.tool, "kind": e.kind, "path": e.path} for e in t.changes]}
            for t in turns]


def register_repl_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    from cli_agent.ui.commands import Command

    registry.register(Command("undo", "revert the last turn's file changes", _repl_undo, "[N|list]",
                              help="/undo reverts the newest turn's changes (created files removed, deleted ones "
                                   "restored, modes kept); /undo N reverts turn N; /undo list shows the turns. It "
                                   "refuses, naming the file, when a file changed since the agent wrote it.",
                              complete=lambda c, args: ["list"]))


def _repl_undo(ctx: CommandContext, args: str) -> None:
    from rich.text import Text

    from cli_agent.messages import Message
    from cli_agent.ui.escape import escape_for_terminal as esc

    journal = getattr(ctx.session, "journal", None) or Journal(ctx.session.workspace.root)
    word = args.strip()
    try:
        if word in ("list", "--list"):
            ctx.console.print(Text(render_turns(journal.turns())))
            return
        if word and not word.isdigit():
            ctx.console.print(Text(f"usage: /undo [N|list], not {esc(word)!r}", style="yellow"))
            return
        undone = journal.undo(int(word) if word else None)
    except errors.CliAgentError as exc:
        ctx.console.print(Text(esc(str(exc)), style="yellow"))
        return
    ctx.console.print(Text(esc(f"undid turn {undone.turn}: " + (", ".join(undone.done) or "nothing left to "
                                                                                             "revert")), style="green"))
    ctx.session.agent.history.append(Message("user", f"(The user undid turn {undone.turn} of file changes: "
                                                     f"{', '.join(undone.done) or 'nothing'}. Read files again "
                                                     f"before changing them.)"))

"""The session index: every REPL or one-shot session's trace, indexed in SQLite so it can be listed and continued.

    index = SessionIndex()                               # paths.user_state_dir() / "sessions.sqlite3"
    index.list(workspace)  -> [SessionEntry, ...]        # newest first; entry.problem() says why one can't resume
    index.latest(workspace) -> SessionEntry | None
    entry, trace = load_resumable(workspace, selector)  # selector: LATEST or an id (prefix); TraceError if damaged

A session is added once the model has answered one of its runs (`note_turn`, after the run: a run that never
started, for a missing key or a refused connection, leaves no session behind); each run notes how it ended, so a
failed session is marked. Failing to write the index never fails a run. Continuing a session
(`session.resume_into`) writes a new trace that starts with the old one's events, so every trace stays
self-contained (replay and a later resume need nothing else), and the index row then points at the new trace
(`adopt`). The schema grows by append-only,
named migrations.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from cli_agent.contracts import LATEST, TraceError, UsageError, dataclass
from cli_agent.fs import paths
from cli_agent.history.trace import Trace, read_trace

__all__ = ["SessionEntry", "SessionIndex", "adopt", "index_key", "load_resumable", "note_turn", "writable"]

FIRST_MESSAGE_MAX = 500
MIGRATIONS: tuple[tuple[str, str], ...] = (  # append-only: (name, SQL); user_version counts those applied
    ("001_create_sessions", """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, started REAL NOT NULL,
                               updated REAL NOT NULL, model TEXT NOT NULL DEFAULT '',
                               first_message TEXT NOT NULL DEFAULT '', trace_path TEXT NOT NULL);
        CREATE INDEX sessions_by_workspace ON sessions (workspace, updated);
    """),
    ("002_turns_and_status", """
        ALTER TABLE sessions ADD COLUMN turns INTEGER NOT NULL DEFAULT 0;
        ALTER TABLE sessions ADD COLUMN status TEXT NOT NULL DEFAULT ''
    """),
)
_COLUMNS = "id, workspace, started, updated, model, first_message, trace_path, turns, status"
FAILED = ("error", "usage", "unusable", "timeout")  # a last run that ended so marks the session failed


@dataclass(frozen=True)
class SessionEntry:
    id: str
    workspace: str
    started: float
    updated: float
    model: str
    first_message: str
    trace_path: Path
    turns: int = 0  # runs in which the model answered (0 in an index older than the count)
    status: str = ""  # how its last run ended (a StopReason's value; "" before it was kept)

    @property
    def failed(self) -> bool:
        return self.status in FAILED

    def problem(self) -> str | None:
        """None if the session can be resumed, else one line saying why not (missing or damaged trace)."""
        found = _trace_or_problem(self.trace_path)
        return found if isinstance(found, str) else None


def _trace_or_problem(trace_path: Path) -> Trace | str:
    """The session's trace, or one line saying why it can't be resumed."""
    if not trace_path.exists():
        return f"its trace is missing ({trace_path})"
    try:
        return read_trace(trace_path)
    except TraceError as exc:
        return f"its trace is damaged: {exc}"


def index_key(workspace: str | Path) -> str:
    return str(Path(workspace).expanduser().resolve())


class SessionIndex:
    """The index. Each method opens the database, does one transaction and closes it (several processes share it)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or paths.user_state_dir() / "sessions.sqlite3"

    @contextlib.contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(self.path, timeout=5.0)
        try:
            with conn:
                _migrate(conn)
                yield conn
        finally:
            conn.close()

    def add(self, *, workspace: str | Path, model: str, trace_path: Path, session_id: str | None = None) -> str:
        session_id = session_id or uuid.uuid4().hex[:8]
        now = time.time()
        with self._db() as db:
            db.execute(f"INSERT INTO sessions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, '', ?, 0, '')",
                       (session_id, index_key(workspace), now, now, model, str(trace_path)))
        return session_id

    def note_turn(self, session_id: str, prompt: str, status: str, *, answered: bool,
                  workspace: str | Path = "", model: str = "", trace_path: Path | None = None) -> None:
        """After a run: a run the model answered adds the session (given its workspace, model and trace) if it
        is not in the index yet, and counts; the first such prompt is its first message; `status` is how the run
        ended. A run the model never answered (a missing key, a refused connection) adds nothing."""
        first = " ".join(prompt.split())[:FIRST_MESSAGE_MAX]
        now = time.time()
        with self._db() as db:
            if answered and trace_path is not None:
                db.execute(f"INSERT OR IGNORE INTO sessions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, '', ?, 0, '')",
                           (session_id, index_key(workspace), now, now, model, str(trace_path)))
            db.execute("UPDATE sessions SET updated = ?, status = ?, turns = turns + ?, first_message = CASE WHEN "
                       "first_message = '' AND ? THEN ? ELSE first_message END, model = CASE WHEN ? AND ? != '' "
                       "THEN ? ELSE model END WHERE id = ?",  # the model that answered last (after a /model)
                       (now, status, int(answered), int(answered), first, int(answered), model, model, session_id))

    def note_prompt(self, session_id: str, prompt: str) -> None:
        """Mark the session used now; the first prompt becomes its first message (a run the model answered)."""
        self.note_turn(session_id, prompt, "done", answered=True)

    def adopt(self, old_id: str, new_id: str, trace_path: Path, model: str) -> None:
        """The session `new_id` continues `old_id`: one row remains, `old_id`, pointing at the new trace."""
        with self._db() as db:
            db.execute("DELETE FROM sessions WHERE id = ? AND id != ?", (new_id, old_id))
            db.execute("UPDATE sessions SET trace_path = ?, updated = ?, model = ? WHERE id = ?",
                       (str(trace_path), time.time(), model, old_id))

    def list(self, workspace: str | Path, limit: int | None = None) -> list[SessionEntry]:
        """The sessions of `workspace` that got at least one prompt, last used first."""
        with self._db() as db:
            rows = db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE workspace = ? AND first_message != '' "
                              "ORDER BY updated DESC, started DESC LIMIT ?", (index_key(workspace), limit or -1))
            return [_entry(row) for row in rows]

    def latest(self, workspace: str | Path) -> SessionEntry | None:
        found = self.list(workspace, limit=1)
        return found[0] if found else None

    def get(self, selector: str) -> SessionEntry:
        """The session whose id is or starts with `selector`; UsageError if none or several match."""
        wanted = selector.strip().lower()
        if not wanted:
            raise UsageError("--resume needs a session id (see cli-agent sessions)")
        with self._db() as db:
            pattern = wanted.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
            rows = db.execute(f"SELECT {_COLUMNS} FROM sessions WHERE id LIKE ? ESCAPE '\\' LIMIT 5",
                              (pattern,)).fetchall()
        exact = [row for row in rows if row[0] == wanted]
        if exact or len(rows) == 1:
            return _entry((exact or rows)[0])
        if not rows:
            raise UsageError(f"no session {selector!r}; see cli-agent sessions for the ids")
        raise UsageError(f"session id {selector!r} is ambiguous ({', '.join(r[0] for r in rows)}); give more of it")


def _entry(row: tuple[object, ...]) -> SessionEntry:
    sid, workspace, started, updated, model, first, trace, turns, status = row
    return SessionEntry(str(sid), str(workspace), float(started), float(updated),  # type: ignore[arg-type]
                        str(model), str(first), Path(str(trace)), int(turns), str(status))  # type: ignore[call-overload]


def _migrate(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise UsageError(f"the session index was written by a newer cli-agent (schema {version}); upgrade")
    for number, (_name, sql) in enumerate(MIGRATIONS[version:], version + 1):
        for statement in filter(str.strip, sql.split(";")):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")


# -- what a session calls; the index failing never fails a run ------------------------------------------------

def writable() -> str | None:
    """None when the index can be written (it is opened and migrated), else one line saying why not."""
    try:
        with SessionIndex()._db():
            return None
    except (sqlite3.Error, OSError, UsageError) as exc:
        return f"this session is not in the session index ({exc})"


def record(workspace: Path, model: str, trace_path: Path) -> tuple[str, str | None]:
    """Add a session to the index: (its id, None), or ("", why it could not be added)."""
    try:
        return SessionIndex().add(workspace=workspace, model=model, trace_path=trace_path), None
    except (sqlite3.Error, OSError, UsageError) as exc:
        return "", f"this session is not in the session index ({exc})"


def note_prompt(session_id: str, prompt: str) -> None:
    with contextlib.suppress(sqlite3.Error, OSError, UsageError):
        SessionIndex().note_prompt(session_id, prompt)


def note_turn(session_id: str, prompt: str, status: str, *, answered: bool, workspace: Path, model: str,
              trace_path: Path) -> str | None:
    """`SessionIndex.note_turn`, quietly: None, or one line saying why the index could not be written."""
    try:
        SessionIndex().note_turn(session_id, prompt, status, answered=answered, workspace=workspace, model=model,
                                 trace_path=trace_path)
    except (sqlite3.Error, OSError, UsageError) as exc:
        return f"this session is not in the session index ({exc})"
    return None


def adopt(old_id: str, new_id: str, trace_path: Path, model: str) -> None:
    """`SessionIndex.adopt`, quietly: a session continued without its index row still runs."""
    with contextlib.suppress(sqlite3.Error, OSError, UsageError):
        SessionIndex().adopt(old_id, new_id, trace_path, model)


# -- continuing a session ------------------------------------------------------------------------------------------

def load_resumable(workspace: str | Path, selector: str,
                   index: SessionIndex | None = None) -> tuple[SessionEntry, Trace]:
    """The session to continue (LATEST: this workspace's last) and its trace; a one-line UsageError (exit 2) when
    there is none, it belongs to another workspace, or its trace is missing or damaged."""
    index = index or SessionIndex()
    try:
        if selector == LATEST:
            entry = index.latest(workspace)
            if entry is None:
                raise UsageError(f"no earlier session in {index_key(workspace)} to continue (see cli-agent sessions)")
        else:
            entry = index.get(selector)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index {index.path}: {exc}") from exc
    if entry.workspace != index_key(workspace):
        raise UsageError(f"session {entry.id} belongs to {entry.workspace}; run it there (-C {entry.workspace})")
    found = _trace_or_problem(entry.trace_path)
    if isinstance(found, str):
        raise TraceError(f"session {entry.id} cannot be resumed: {found}")
    return entry, found

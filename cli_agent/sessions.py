"""Sessions: every REPL or one-shot session's trace, indexed in SQLite so it can be listed and continued.

    index = Sessions()                                   # paths.user_state_dir() / "sessions.sqlite3"
    index.list(workspace)  -> [SessionEntry, ...]        # newest first; entry.problem() says why one can't resume
    index.latest(workspace) -> SessionEntry | None
    entry, trace = load_resumable(workspace, selector)  # selector: LATEST or an id (prefix); TraceError if damaged
    resume_into(session, entry, trace)                   # the conversation back into a freshly opened Session
    restore_history(trace) -> [Message, ...]             # what the model had seen, rebuilt from the trace's events

`open_session` records a session when it opens (`record_session`) and `Session.run` notes its first prompt
(`note_prompt`); failing to write the index never fails a run. Continuing a session writes a new trace that starts
with the old one's events, so every trace stays self-contained (replay and a later resume need nothing else), and
the index row then points at the new trace. The schema grows by append-only, named migrations.
"""

from __future__ import annotations

import contextlib
import json
import sqlite3
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent import paths
from cli_agent.errors import TraceError, UsageError
from cli_agent.history import restore_history
from cli_agent.trace import Trace, read_trace

if TYPE_CHECKING:
    from cli_agent.session import Session
    from cli_agent.ui.commands import CommandContext, CommandRegistry

__all__ = ["LATEST", "SessionEntry", "Sessions", "load_resumable", "note_prompt", "print_sessions", "record_session",
           "restore_history", "resume_into"]

LATEST = "@latest"  # the selector `-c/--continue` stands for
FIRST_MESSAGE_MAX = 500
MIGRATIONS: tuple[tuple[str, str], ...] = (  # append-only: (name, SQL); user_version counts those applied
    ("001_create_sessions", """
        CREATE TABLE sessions (id TEXT PRIMARY KEY, workspace TEXT NOT NULL, started REAL NOT NULL,
                               updated REAL NOT NULL, model TEXT NOT NULL DEFAULT '',
                               first_message TEXT NOT NULL DEFAULT '', trace_path TEXT NOT NULL);
        CREATE INDEX sessions_by_workspace ON sessions (workspace, updated);
    """),
)
_COLUMNS = "id, workspace, started, updated, model, first_message, trace_path"


@dataclass(frozen=True)
class SessionEntry:
    id: str
    workspace: str
    started: float
    updated: float
    model: str
    first_message: str
    trace_path: Path

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


def _key(workspace: str | Path) -> str:
    return str(Path(workspace).expanduser().resolve())


class Sessions:
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
            db.execute(f"INSERT INTO sessions ({_COLUMNS}) VALUES (?, ?, ?, ?, ?, '', ?)",
                       (session_id, _key(workspace), now, now, model, str(trace_path)))
        return session_id

    def note_prompt(self, session_id: str, prompt: str) -> None:
        """Mark the session used now; the first prompt becomes its first message."""
        first = " ".join(prompt.split())[:FIRST_MESSAGE_MAX]
        with self._db() as db:
            db.execute("UPDATE sessions SET updated = ?, first_message = CASE WHEN first_message = '' THEN ? "
                       "ELSE first_message END WHERE id = ?", (time.time(), first, session_id))

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
                              "ORDER BY updated DESC, started DESC LIMIT ?", (_key(workspace), limit or -1))
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
    sid, workspace, started, updated, model, first, trace = row
    return SessionEntry(str(sid), str(workspace), float(started), float(updated),  # type: ignore[arg-type]
                        str(model), str(first), Path(str(trace)))


def _migrate(conn: sqlite3.Connection) -> None:
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(MIGRATIONS):
        raise UsageError(f"the session index was written by a newer cli-agent (schema {version}); upgrade")
    for number, (_name, sql) in enumerate(MIGRATIONS[version:], version + 1):
        for statement in filter(str.strip, sql.split(";")):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {number}")


# -- what session.py calls; the index failing never fails a run ------------------------------------------------

def record_session(session: Session) -> None:
    try:
        session.session_id = Sessions().add(workspace=session.workspace.root, model=session.settings.model or "",
                                            trace_path=session.trace_path)
    except (sqlite3.Error, OSError, UsageError) as exc:
        session.notes.append(f"this session is not in the session index ({exc})")


def note_prompt(session_id: str, prompt: str) -> None:
    with contextlib.suppress(sqlite3.Error, OSError, UsageError):
        Sessions().note_prompt(session_id, prompt)


# -- continuing a session ------------------------------------------------------------------------------------------

def load_resumable(workspace: str | Path, selector: str, index: Sessions | None = None) -> tuple[SessionEntry, Trace]:
    """The session to continue (LATEST: this workspace's last) and its trace; a one-line UsageError (exit 2) when
    there is none, it belongs to another workspace, or its trace is missing or damaged."""
    index = index or Sessions()
    try:
        if selector == LATEST:
            entry = index.latest(workspace)
            if entry is None:
                raise UsageError(f"no earlier session in {_key(workspace)} to continue (see cli-agent sessions)")
        else:
            entry = index.get(selector)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index {index.path}: {exc}") from exc
    if entry.workspace != _key(workspace):
        raise UsageError(f"session {entry.id} belongs to {entry.workspace}; run it there (-C {entry.workspace})")
    found = _trace_or_problem(entry.trace_path)
    if isinstance(found, str):
        raise TraceError(f"session {entry.id} cannot be resumed: {found}")
    return entry, found


def resume_into(session: Session, entry: SessionEntry, trace: Trace) -> None:
    """Give a freshly opened session the conversation of `entry`: its history, its trace's events (copied to the
    head of the new trace), and its place in the index. Call it before the session's first run (a REPL's
    `/resume` opens a new session for it)."""
    from cli_agent.playback import raw_records

    session.agent.history[:] = restore_history(trace)
    for record in raw_records(entry.trace_path):  # raw, so what the old trace kept about each change survives
        session.trace._write(record)  # TraceWriter has no public raw-record writer
    new_id, session.session_id = session.session_id, entry.id
    with contextlib.suppress(sqlite3.Error, OSError, UsageError):
        Sessions().adopt(entry.id, new_id, session.trace_path, session.settings.model or "")


# -- /resume in the REPL -------------------------------------------------------------------------------------------

PICK_MAX = 20  # sessions the picker lists


def register_repl_commands(registry: CommandRegistry, ctx: CommandContext) -> None:
    from cli_agent.ui.commands import Command

    registry.register(Command("resume", "continue an earlier session of this workspace", _repl_resume, "[N|ID]",
                              help="/resume lists this workspace's sessions, last used first, and asks for a number; "
                                   "/resume N or /resume ID picks one at once. The conversation goes on where that "
                                   "session ended, in a new trace; this session is closed (its trace stays). A "
                                   "session whose trace is missing or damaged is listed with the reason and cannot "
                                   "be resumed."))


def _repl_resume(ctx: CommandContext, args: str) -> None:

    from rich.text import Text

    from cli_agent.session import open_session
    from cli_agent.ui.escape import escape_for_terminal as esc

    def say(text: str, style: str = "") -> None:
        ctx.console.print(Text(esc(text), style=style))

    current = ctx.session
    try:
        listed = Sessions().list(current.workspace.root, limit=PICK_MAX + 1)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index: {exc}") from exc
    rows = [(e, e.problem()) for e in listed if e.id != current.session_id][:PICK_MAX]
    if not rows:
        say("no earlier session in this workspace to resume")
        return
    resumable = [e for e, problem in rows if problem is None]
    choice = args.strip()
    if not choice:
        for entry, problem in rows:
            number = f"{resumable.index(entry) + 1:>3}" if problem is None else "  -"
            say(f"{number}  {entry.id}  {_when(entry.updated)}  {entry.model or '-'}  {_clip(entry.first_message)}"
                + (f"  [cannot resume: {problem}]" if problem else ""), "" if problem is None else "dim")
        try:
            choice = ctx.ask("resume which? (number; Enter: none) ").strip()
        except (KeyboardInterrupt, EOFError):
            choice = ""
        if not choice:
            say("nothing resumed")
            return
    picked = _pick(rows, resumable, choice)
    if picked is None:
        say(f"no session {choice!r} in the list: give its number (1-{len(resumable)}) or its id", "yellow")
        return
    entry, trace = load_resumable(current.workspace.root, picked.id)  # damaged: TraceError, one line
    settings = current.settings.model_copy(update={"trace": None})  # a --trace file holds the current session
    new = open_session(settings, interactive=True, provider_factory=lambda s: current.provider)
    try:
        resume_into(new, entry, trace)
    except BaseException:
        new.trace.close()  # the provider is still the current session's
        raise
    new.agent.policy = new.agent.policy.with_mode(current.agent.policy.mode)  # keep what /approval set
    ctx.replace_session(new)
    say(f"resumed session {entry.id} ({len(new.agent.history)} messages): {_clip(entry.first_message)}", "green")


def _pick(rows: list[tuple[SessionEntry, str | None]], resumable: list[SessionEntry],
          choice: str) -> SessionEntry | None:
    """The entry a picker answer names: a number of the list, or an id (or its start) of a listed session."""
    if choice.isdigit():
        n = int(choice)
        return resumable[n - 1] if 1 <= n <= len(resumable) else None
    found = [e for e, _ in rows if e.id.startswith(choice.lower())]
    return found[0] if len(found) == 1 else None


def _when(stamp: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(stamp))


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def print_sessions(workspace: str | Path, *, as_json: bool = False, limit: int = 50) -> int:
    """`cli-agent sessions`: this workspace's sessions, last used first, each resumable or with why not."""
    import sys

    from cli_agent.ui.escape import escape_for_terminal

    index = Sessions()
    try:
        entries = index.list(workspace, limit=limit)
    except sqlite3.Error as exc:
        raise UsageError(f"cannot read the session index {index.path}: {exc}") from exc
    rows = [(e, e.problem()) for e in entries]
    if as_json:
        sys.stdout.write(json.dumps([{"id": e.id, "started": e.started, "updated": e.updated, "model": e.model,
                                      "first_message": e.first_message, "trace": str(e.trace_path),
                                      "resumable": p is None, "problem": p} for e, p in rows],
                                    ensure_ascii=False) + "\n")
        return 0
    if not rows:
        sys.stdout.write(f"no sessions in {_key(workspace)} yet\n")
        return 0
    for entry, problem in rows:
        when, message = _when(entry.updated), _clip(entry.first_message)
        status = f"  [cannot resume: {problem}]" if problem else ""
        sys.stdout.write(escape_for_terminal(f"{entry.id}  {when}  {entry.model or '-':<20}  {message}{status}")
                         + "\n")
    sys.stdout.write("continue the last with: cli-agent -c   a chosen one: cli-agent --resume ID\n")
    return 0

"""What a session leaves behind: the JSONL trace (`trace`), the SQLite index of sessions (`session_index`), the
undo journal and undo (`journal`, `undo`). Replaying a trace is the `replay` package's.

May import: agent and everything below it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.history.journal import Journal, Turn
    from cli_agent.history.session_index import (
        LATEST,
        SessionEntry,
        SessionIndex,
        adopt,
        index_key,
        load_resumable,
        note_turn,
        writable,
    )
    from cli_agent.history.trace import Trace, TraceWriter, default_trace_path, raw_records, read_trace
    from cli_agent.history.undo import (
        current_bytes,
        remove_empty_dirs,
        render_turns,
        reverting_change,
        turns_json,
        undo_turn,
    )

__all__ = [
    "LATEST",
    "Journal",
    "SessionEntry",
    "SessionIndex",
    "Trace",
    "TraceWriter",
    "Turn",
    "adopt",
    "current_bytes",
    "default_trace_path",
    "index_key",
    "load_resumable",
    "note_turn",
    "raw_records",
    "read_trace",
    "remove_empty_dirs",
    "render_turns",
    "reverting_change",
    "turns_json",
    "undo_turn",
    "writable",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("Journal", "Turn"):
        from cli_agent.history import journal

        return getattr(journal, name)
    if name in (
        "LATEST",
        "SessionEntry",
        "SessionIndex",
        "adopt",
        "index_key",
        "load_resumable",
        "note_turn",
        "writable",
    ):
        from cli_agent.history import session_index

        return getattr(session_index, name)
    if name in ("Trace", "TraceWriter", "default_trace_path", "raw_records", "read_trace"):
        from cli_agent.history import trace

        return getattr(trace, name)
    if name in ("current_bytes", "remove_empty_dirs", "render_turns", "reverting_change", "turns_json", "undo_turn"):
        from cli_agent.history import undo

        return getattr(undo, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

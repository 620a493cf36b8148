"""What a session leaves behind: the JSONL trace (`trace`), the SQLite index of sessions (`session_index`), the
undo journal and undo (`journal`, `undo`), and going back to before a prompt (`rewind`). Replaying a trace is the
`replay` package's.

May import: agent and everything below it.
"""

from cli_agent.history.journal import *
from cli_agent.history.rewind import *
from cli_agent.history.session_index import *
from cli_agent.history.trace import *
from cli_agent.history.undo import *

__all__ = [
    "Journal", "RewindPoint", "SessionEntry", "SessionIndex", "Trace", "TraceWriter", "Turn", "adopt",
    "current_bytes", "default_trace_path", "index_key", "load_resumable", "note_turn", "raw_records", "read_trace",
    "remove_empty_dirs", "render_turns", "reverting_change", "rewind_files", "rewind_points", "turns_json", "undo_turn",
    "writable",
]

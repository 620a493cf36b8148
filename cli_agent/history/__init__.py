"""What a session leaves behind: the JSONL trace (`trace`), the SQLite index of sessions (`session_index`), the
undo journal and undo (`journal`, `undo`). Replaying a trace is the `replay` package's.

May import: agent and everything below it.
"""

"""What a session leaves behind: the JSONL trace (`trace`), the SQLite index of sessions (`session_index`), the
undo journal and undo (`journal`, `undo`), and replay's pieces: rewinding a copy of a workspace (`rewind`) and the
recorded replies played back as a provider (`replay_provider`).

May import: agent and everything below it.
"""

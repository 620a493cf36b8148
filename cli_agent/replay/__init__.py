"""Replay: a recorded session run again, offline, on a rewound copy of its workspace, and the first place it goes
differently.

    engine.py          `replay(path)`: the trace read, the copy made and rewound, a session opened on it, each
                       recorded run driven through it and compared
    compare.py         a replayed run's events checked against the recording's, item by item (`Divergence`)
    provider.py        the recording played back: its settings, the model's replies (`ReplayProvider`), the
                       recorded approvals (`RecordedApprover`)
    rewind.py          a copy of the workspace (`copy_workspace`) with the recorded changes undone (`rewind`)
    recorded_tools.py  MCP tools, and commands not run, answering with the results the trace recorded

The command, `cli-agent replay`, is `cli.replay`: it prints what `engine.replay` returns.

May import: session and everything below it (it opens a session on the copy); only cli imports it.
"""

from cli_agent.replay.compare import *
from cli_agent.replay.engine import *

__all__ = ["replay", "short"]

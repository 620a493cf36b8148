"""The verification tests' project and run: a calc project whose test catches `add` subtracting, the scripted
model's edits of it, and one run through the CLI with its JSON report and trace."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from clikit import cli

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
WRONG = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a * b"}}]}
RIGHT = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a * b", "new": "a + b"}}]}
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
DONE = {"text": "Fixed add()."}


def run_json(tmp_path: Path, ws: Path, home: Path, replies: list[Any], *extra: str,
             env_extra: dict[str, str] | None = None,
             task: str = "add(2, 3) returns -1: fix add") -> tuple[int, dict[str, Any], str]:
    """The task states no example of its own (`task_examples`), unless `task` does: the project's tests judge."""
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    trace = tmp_path / "trace.jsonl"
    done = cli(["-p", task, "--model", f"scripted:{script}", "-C", str(ws),
                "--yes", "--output", "json", "--trace", str(trace), *extra], home=home, env_extra=env_extra,
               timeout=180)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout), trace.read_text()


def user_messages(trace: str) -> list[str]:
    texts = []
    for line in trace.splitlines():
        record = json.loads(line)
        if record.get("type") == "messages_appended":
            texts += [m.get("content") or "" for m in record["messages"] if m.get("role") == "user"]
    return texts

"""`--attempts` as a user runs it: a function the task names gets the whole-definition rewrite even when the task does
not name its file (the file is found), and a candidate that changed nothing is reported as such, not as a test
verdict it never had."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from clikit import calc_project, cli

pytestmark = [pytest.mark.slow]

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
WRONG = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a * b"}}]}
DONE = {"text": "Fixed add()."}
REWRITE = {"text": "```python\ndef add(a, b):\n    return a + b\n```\n"}


def run(tmp_path: Path, replies: list[object], config: str = "") -> tuple[int, dict, Path]:
    ws, home = calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\nverify_rounds = 0\n{config}")
    script = tmp_path / "script.json"
    script.write_text(json.dumps(replies))
    done = cli(["-p", "add(2, 3) returns -1, it should be 5", "--model", f"scripted:{script}", "-C", str(ws),
                "--yes", "--output", "json", "--attempts", "2"], home=home, timeout=180)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout), ws


def test_a_named_function_is_rewritten_when_the_task_does_not_name_its_file(tmp_path: Path) -> None:
    code, report, ws = run(tmp_path, [READ, WRONG, DONE, REWRITE])
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_a_candidate_that_changed_nothing_says_so(tmp_path: Path) -> None:
    code, report, _ = run(tmp_path, [READ, WRONG, DONE, {"text": "add() looks right to me."}], "task_files = false\n")
    assert code == 8, report
    attempts = [w for w in report["warnings"] if w.startswith("candidate 2 of 2")]
    assert attempts[-1] == "candidate 2 of 2 made no change; one more is sampled in its place", report["warnings"]
    assert report["warnings"][-1] == "candidate 3 of 3 made no change"  # at most count - 1 in the place of others
    assert not any("did not pass: done" in w for w in report["warnings"])

"""`--timeout` is a hard limit for a run that changed files: the verdict on the files as it leaves them fits in
the run's time, or is skipped and said. Through the real CLI, the real sandbox and a project whose tests sleep."""

from __future__ import annotations

import json
import time

import pytest
from clikit import calc_project, cli
from verifykit import PYTEST, READ

pytestmark = pytest.mark.slow


def test_a_run_that_changed_files_ends_at_its_timeout_and_says_the_verdict_was_skipped(tmp_path):
    ws, home = calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\n")
    (ws / "tests" / "test_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    edit = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}
    script = tmp_path / "script.json"
    script.write_text(json.dumps([READ, edit, {"delay": 60, "text": "never said"}]))
    started = time.monotonic()
    done = cli(["-C", str(ws), "-p", "fix add", "--model", f"scripted:{script}", "--yes", "--output", "json",
                "--timeout", "6"], home=home, timeout=120)
    took = time.monotonic() - started
    report = json.loads(done.stdout)
    assert report["status"] == "timeout", done.stdout
    assert took < 6 + 5, f"the run took {took:.1f} s under --timeout 6"
    assert report["verified"] is None and "skipped" in report["tests"] and "time" in report["tests"], report

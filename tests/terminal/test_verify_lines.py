"""What verification draws in the REPL, in a real pseudo-terminal at 80 and 60 columns: a failing task example as
the example and what it gave (not "tests fail: 1 of the task's 1 example(s) fail"), and a run whose changes no test
proves saying so."""

from __future__ import annotations

import json
import sys

import pytest
from termkit import PROMPT

pytestmark = pytest.mark.slow

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "stats.py"}}]}
STILL_WRONG = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "stats.py", "old": "(len(xs) + 1)",
                                                                  "new": "(len(xs) + 1.0)"}}]}
DONE = {"text": "Fixed mean."}


def _project(tmp_path, config: str) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "stats.py").write_text("def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    (tmp_path / "home" / "config").mkdir(parents=True)
    (tmp_path / "home" / "config" / "config.toml").write_text(config)


@pytest.mark.parametrize("cols", [80, 60])
def test_a_failing_task_example_is_drawn_as_the_example_and_what_it_gave(term, tmp_path, cols):
    _project(tmp_path, f"test_command = {json.dumps(PYTEST)}\nverify_rounds = 0\n")
    (tmp_path / "ws" / "test_stats.py").write_text("from stats import mean\n\n\ndef test_empty_ok():\n"
                                                   "    assert mean([]) == 0\n")
    t = term([READ, STILL_WRONG, DONE], cols=cols, args=("--yes",))
    t.say("In stats.py, mean([1, 2, 3]) should be 2")
    seen = " ".join(t.expect(r"gave 1\.5").split())
    assert seen.endswith("✗ mean([1, 2, 3]) == 2:"), seen[-300:]
    assert "⧗ verifying: the task's examples, then" in seen and "tests fail:" not in seen
    t.expect(PROMPT)
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [80, 60])
def test_a_change_no_test_proves_says_so_in_the_repl(term, tmp_path, cols):
    _project(tmp_path, "")
    fix = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "stats.py", "old": "(len(xs) + 1)",
                                                              "new": "len(xs)"}}]}
    t = term([READ, fix, DONE], cols=cols, args=("--yes",))
    t.say("fix the mean in stats.py")
    seen = " ".join(t.expect(r"\(set test_command\)").split())
    assert seen.endswith("! not verified: no tests found"), seen[-400:]
    assert "Fixed mean." in seen and "tests pass" not in seen
    rest = " ".join(t.expect(PROMPT).split())
    assert "tests pass" not in rest
    assert t.quit() == 0

"""`--attempts` in a terminal at 60 and 80 columns (a pyte screen): the test run a candidate makes before it changes
anything is drawn as a check before any change (not as the verification of a change), and the question about the
candidate that passed takes `y` or `n` only: no `f`, the model's work being over."""

from __future__ import annotations

import json
import sys

import pexpect
import pytest
from clikit import calc_project
from screenkit import Screen
from termkit import QUESTION, Term

pytestmark = pytest.mark.slow

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
WRONG = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a * b"}}]}
REWRITE = {"text": "```python\ndef add(a, b):\n    return a + b\n```\n"}


@pytest.mark.parametrize("cols", [60, 80])
def test_the_check_before_any_change_and_the_candidate_question(tmp_path, cols):
    ws, _ = calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\nverify_rounds = 0\n")
    t = Term(tmp_path, [READ, WRONG, {"text": "Fixed add()."}, REWRITE], ws, cols=cols, wait=None,
             args=("--attempts", "2", "-p", "add(2, 3) returns -1, it should be 5"))
    screen = Screen(t.child, cols)
    t.expect_raw(QUESTION, 120)
    t.child.send("y")  # the run's own edit, which the tests then refuse
    t.expect_raw("passes the tests", 180)
    t.expect_raw(QUESTION, 60)
    lines = screen.lines()
    start = next(i for i, line in enumerate(lines) if "candidate 2 of 2: starting from" in line)
    code = next(i for i in range(start, len(lines)) if lines[i].strip() == "return a + b")
    before = lines[start:code]
    said = " ".join(" ".join(before).split())
    assert "⧗ checking what fails before any change:" in said and "before any change: 1 failed" in said
    assert not any(line.startswith(("⧗ verifying", "✗ tests fail")) for line in before)
    check = next(i for i, line in enumerate(before) if line.startswith("⧗ checking"))
    rest = before[check + 1:before.index("", check)]
    assert rest and all(line.startswith("  ") for line in rest)  # under its own text
    after = " ".join(" ".join(lines[code:]).split())
    assert "⧗ verifying:" in after and "✓ tests pass" in after  # the change itself is verified as before
    question = after[after.index("candidate 2 of 2: passes the tests"):]
    assert "y yes, apply the candidate's changes" in question and "n no, keep the files as they are" in question
    assert "f no" not in question and "tell the model" not in question and "every later" not in question
    t.child.send("f")  # not an answer here: no
    t.child.expect(pexpect.EOF, timeout=60)
    t.child.close()
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"  # the run's edit, the candidate's not

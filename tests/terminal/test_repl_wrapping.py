"""Text that wraps at 60 columns (a pyte screen): between words and under its own indent, never mid-word or back at
column 0: the first-start help, a result line's `(approved by …)`, a workflow parameter's help."""

from __future__ import annotations

import pexpect
import pytest
from screenkit import Screen, Terms
from termkit import PROMPT, Term, create

pytestmark = pytest.mark.slow

NO_KEYS = {"OPENAI_API_KEY": "sk-test", "ANTHROPIC_API_KEY": None, "GEMINI_API_KEY": None}


def test_the_first_start_help_wraps_between_words(tmp_path):
    t = Term(tmp_path, None, cols=60, env=NO_KEYS, wait=None)
    screen = Screen(t.child, 60)
    t.expect(r"\[Y/n\]")
    t.child.send("n")
    t.expect("Which model then")
    t.child.send("\x1b")
    t.expect(pexpect.EOF)
    t.child.close()
    lines = [line for line in screen.lines() if line]
    said = " ".join(" ".join(lines).split())
    assert ("a hosted model: set its key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …), then" in said)
    assert "to skip this next time." in said
    bullets = [i for i, line in enumerate(lines) if line.lstrip().startswith("·")]
    assert all(lines[i + 1].startswith("    ") or lines[i + 1].lstrip().startswith(("·", "cli-agent"))
               for i in bullets if i + 1 < len(lines))  # a bullet's next line is under it


@pytest.mark.parametrize("cols", [60])
def test_a_result_line_and_a_parameter_help_wrap_under_themselves(tmp_path, cols):
    name = "a_rather_long_module_name_for_the_test.py"
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create(name)]}, {"text": "made it"}], cols,
                                config='approval = "edits"\n')
        t.say("make it")
        t.expect("made it")
        t.expect(PROMPT)
        lines = screen.lines()
        at = next(i for i, line in enumerate(lines) if line.startswith("  ✓ create_file"))
        tail = lines[at + 1:next(i for i, line in enumerate(lines) if line.startswith("made it"))]
        assert tail and all(line.startswith("    ") for line in tail)  # "(approved by …)" under the line
        t.say("/explain")
        t.expect("path:")
        lines = screen.lines()
        help_at = next(i for i, line in enumerate(lines) if "The file or folder to explain" in line
                       or line.startswith("  path (path"))
        assert lines[help_at].startswith("  ")
        t.child.sendcontrol("c")
        t.expect(PROMPT)
        assert t.quit() == 0

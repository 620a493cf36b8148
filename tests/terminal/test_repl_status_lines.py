"""The REPL's status lines in a pseudo-terminal (a pyte screen at 60 and 80 columns): what a turn's closing line and
the toolbar say only what holds (no "0 steps" for the user's own command, no tool grant under "approval: all")."""

from __future__ import annotations

import sys

import pytest
from screenkit import Terms
from termkit import PROMPT, QUESTION, create

pytestmark = pytest.mark.slow


def _toolbar(screen) -> str:
    return next(line for line in reversed(screen.lines()) if "approval:" in line)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
@pytest.mark.parametrize("cols", [60, 80])
def test_the_users_command_closes_without_steps(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([], cols)
        t.say("!echo hi-$((1+1))")
        t.expect("Attach your command's output")
        t.child.send("n")
        t.expect("not attached")
        t.expect(PROMPT)
        seen = "\n".join(screen.lines())
        assert "hi-2" in seen and "0 steps" not in seen
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_after_yes_to_all_the_toolbar_lists_no_tool_grant(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create("a.txt")]}, {"text": "made a"},
                                 {"tool_calls": [{"name": "delete_file", "arguments": {"path": "a.txt"}}]},
                                 {"text": "deleted a"}], cols,
                                env={"PROMPT_TOOLKIT_NO_CPR": None})
        t.say("make a")
        t.expect(QUESTION)
        t.child.send("t")  # this tool for the session
        t.expect("made a")
        t.expect(r"\+create")
        t.say("delete a")
        t.expect(QUESTION)
        t.child.send("a")  # yes to this and every later change this session
        t.expect("deleted a")
        t.expect(PROMPT)
        t.expect("approval: all")
        assert "+create" not in _toolbar(screen)
        assert t.quit() == 0

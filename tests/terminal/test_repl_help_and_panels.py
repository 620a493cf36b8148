"""/help and a change panel in a pseudo-terminal (a pyte screen at 60 and 80 columns): /help gives the keys first and
one line a command on a narrow terminal; a change panel says its set options in words, never as raw JSON."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT, QUESTION

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("cols", [60, 80])
def test_help_puts_the_keys_first_and_fits(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([], cols)
        t.say("/cost")  # the start-up's banner comes with the first line
        t.expect("tokens")
        t.expect(PROMPT)
        t.say("/help")
        t.expect("/help NAME shows one")
        t.expect(PROMPT)
        lines = screen.lines()
        shown = [line for line in lines[max(i for i, line in enumerate(lines) if line.startswith("> /help")) + 1:]
                 if line.strip() and line.strip() != ">"]
        text = "\n".join(shown)
        assert text.index("Enter sends") < text.index("Approval answers") < text.index("commands:")
        assert all(len(line) <= cols for line in shown)
        assert len(shown) <= 40  # not 60 lines
        assert "  /exit" in text and "  /model [NAME]" in text
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_a_change_panel_says_its_options_in_words(tmp_path, cols):
    read = {"name": "read_file", "arguments": {"path": "a.py"}}
    edit = {"name": "edit_file", "arguments": {"path": "a.py", "old": "x = 1", "new": "x = 2", "replace_all": False}}
    every = {"name": "edit_file", "arguments": {"path": "a.py", "old": "x = 2", "new": "x = 3", "replace_all": True}}
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [read]}, {"tool_calls": [edit]}, {"tool_calls": [every]},
                                 {"text": "edited"}], cols)
        (t.ws / "a.py").write_text("x = 1\n")
        t.say("edit a")
        t.expect(QUESTION)
        t.child.send("y")
        t.expect(QUESTION)
        t.child.send("y")
        t.expect("edited")
        t.expect(PROMPT)
        seen = "\n".join(screen.lines())
        assert "{" not in seen and "false" not in seen and "replace_all" not in seen
        assert "replace all: yes" in seen  # the option that is set, in words
        assert t.quit() == 0

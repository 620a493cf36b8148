"""A hook's line in the REPL at 80 and 60 columns: a long command is shortened with `…`, what the hook printed is
cut with `…` when it does not fit, and /expand shows the hook whole (its command and everything it printed)."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT, create

pytestmark = pytest.mark.slow

SAID = "formatted shapes/stadium.py and shapes/circle.py and shapes/square.py and shapes/triangle.py in place"
COMMAND = f"echo '{SAID}'  # the project's formatter, run after every file it creates: see tools/fmt"


@pytest.mark.parametrize("cols", [80, 60])
def test_a_hook_line_cuts_with_an_ellipsis_and_expand_shows_it_whole(tmp_path, cols):
    config = f'[[hooks]]\nevent = "after_tool"\nmatch = "create_file"\ncommand = "{COMMAND}"\n'
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create("a.txt")]}, {"text": "made"}], cols, config=config,
                                args=("--yes",))
        t.say("make a")
        t.expect("made")
        t.expect(PROMPT)
        lines = screen.lines()
        at = next(i for i, line in enumerate(lines) if line.startswith("⚑ after_tool hook"))
        line, said = lines[at], lines[at + 1]
        assert line.endswith("…: exit 0") and len(line) <= cols, line  # the command shortened with "…"
        assert said.startswith("    formatted shapes/") and said.endswith("…") and len(said) <= cols, said
        t.say("/expand")
        assert screen.wait_until(t.child, lambda: "$ echo" in screen.text()), screen.text()[-1500:]
        text = " ".join(screen.text().rpartition("> /expand")[2].split())
        assert "see tools/fmt" in text and SAID in text, text
        assert t.quit() == 0

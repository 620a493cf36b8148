"""Tab at the prompt, in a pseudo-terminal with a pyte screen: it completes what every match shares (as a shell
does), picks nothing on an ambiguous word until then, and the quitting command is never the first pick."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = pytest.mark.slow


def _input_line(screen) -> str:
    return next((line.rstrip() for line in reversed(screen.lines()) if line.startswith("> ")), "")


def _drawn(t, screen, wanted) -> str:
    """The input line once `wanted(line)` holds (the screen is fed while waiting), or the last one drawn."""
    screen.wait_until(t.child, lambda: wanted(_input_line(screen)), timeout=30)
    return _input_line(screen)


@pytest.mark.parametrize("cols", [60, 80])
def test_tab_completes_the_shared_part_and_never_picks_exit_first(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([], cols)
        t.child.send("/e")
        t.child.send("\t")  # /exit, /expand, /explain: what they share
        assert _drawn(t, screen, lambda line: line.startswith("> /ex")) == "> /ex"
        t.child.send("\t")  # the first pick
        assert _drawn(t, screen, lambda line: len(line) > 5).startswith("> /exp")  # never /exit
        t.child.send("\x15")  # Ctrl-U: the line is empty again
        t.child.send("/ex\t\r\r")  # Tab, Enter, Enter: whatever was picked runs, and the REPL goes on
        t.expect(PROMPT)
        t.child.send("/tr\t")  # one match: completed whole
        t.expect("/trace")
        t.child.send("\r")
        t.expect(r"\.jsonl")
        t.expect(PROMPT)
        assert t.child.isalive()
        assert t.quit() == 0

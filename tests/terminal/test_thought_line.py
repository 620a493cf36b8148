"""A reasoning model's folded thought is one line at 80 and 60 columns (never its count wrapped alone onto the
next line), and `-p` on a terminal does not point at /expand, which a one-shot run does not have."""

from __future__ import annotations

import json
import sys

import pexpect
import pytest
from screenkit import Screen
from termkit import PROMPT, Term, repl_env

pytestmark = pytest.mark.slow

THOUGHT = ("The failing test imports parse from a.py, so read a.py first and then check the empty-string case, "
           "which the docstring promises returns an empty list rather than raising ValueError.")
REPLY = {"thinking": THOUGHT, "text": "Nothing to change."}


def _folded(lines: list[str]) -> list[str]:
    at = [i for i, line in enumerate(lines) if line.startswith("✻ thought:")]
    assert len(at) == 1, lines
    return lines[at[0]:at[0] + 2]


@pytest.mark.parametrize("cols", [80, 60])
def test_p_on_a_terminal_folds_the_thought_in_one_line_without_expand(tmp_path, cols):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([REPLY]))
    (tmp_path / "ws").mkdir()
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "--model", f"scripted:{script}", "-C",
                                           str(tmp_path / "ws"), "-p", "why?"],
                          env=repl_env(tmp_path / "home"), dimensions=(40, cols), encoding="utf-8", timeout=60)
    screen = Screen(child, cols)
    child.expect(pexpect.EOF)
    first, after = _folded(screen.lines())
    assert first.endswith("(29 words)") and len(first) <= cols, first
    assert "/expand" not in screen.text() and "Nothing to change." in after


@pytest.mark.parametrize("cols", [80, 60])
def test_the_repl_folds_the_thought_in_one_line_with_its_count(tmp_path, cols):
    t = Term(tmp_path, [REPLY], cols=cols)
    screen = Screen(t.child, cols)
    t.say("why?")
    t.expect("Nothing to change")
    t.expect(PROMPT)
    first, _ = _folded(screen.lines())
    assert first.endswith("(29 words · /expand)") and len(first) <= cols, first
    assert t.quit() == 0

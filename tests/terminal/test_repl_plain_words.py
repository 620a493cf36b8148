"""What the REPL says after a command and an interrupt, in a pseudo-terminal (a pyte screen at 60 and 80 columns):
nothing about changes when a command changed no file, one line for an interrupt, and a line for a command that
Ctrl-C stopped."""

from __future__ import annotations

import sys

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def command(text: str) -> dict:
    return {"tool_calls": [{"name": "run_command", "arguments": {"command": text}}]}


@pytest.mark.parametrize("cols", [60, 80])
def test_a_command_that_changed_no_file_says_nothing_about_changes(tmp_path, cols):
    caches = "mkdir -p __pycache__ .pytest_cache && echo x > __pycache__/a.pyc && echo y > .pytest_cache/v; echo ran"
    with Terms(tmp_path) as terms:
        t, screen = terms.start([command(caches), {"text": "all good"}], cols)
        t.say("run it")
        t.expect("all good")
        t.expect(PROMPT)
        seen = "\n".join(screen.lines())
        assert "run_command exit 0" in seen
        assert "changes:" not in seen and "ignored file" not in seen
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_a_command_stopped_by_ctrl_c_says_so_in_one_line(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([command("echo x > made.txt; echo STARTED; sleep 60"), {"text": "unused"}], cols)
        t.say("run it")
        t.expect("STARTED")
        t.child.sendcontrol("c")
        t.expect("the command was stopped")
        t.expect(PROMPT)
        lines = screen.lines()
        stopped = [line for line in lines if "the command was stopped" in line]
        assert stopped and "none of its file" in " ".join(lines[lines.index(stopped[0]):][:2])
        interrupted = [line for line in lines if line.startswith("interrupted")]
        assert interrupted == ["interrupted: nothing was half-written"]  # one line, at 60 columns too
        assert not (t.ws / "made.txt").exists()
        assert t.quit() == 0

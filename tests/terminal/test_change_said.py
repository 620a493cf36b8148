"""When the model's last answer does not name what it changed, the end of the run says it in one line of the
harness's own (`✎ changed stats.py (+1 -1) · tests pass`), in the REPL and in `-p` on a terminal, at 80 and 60
columns; an answer that names the file gets no such line."""

from __future__ import annotations

import json
import sys

import pexpect
import pytest
from screenkit import Screen
from termkit import Term, repl_env

pytestmark = pytest.mark.slow

FIX = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "stats.py", "old": "(len(xs) + 1)",
                                                          "new": "len(xs)"}}]}
DOCSTRING = {"text": "Return the arithmetic mean of xs."}
PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"


def _project(tmp_path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "stats.py").write_text("def mean(xs):\n    return sum(xs) / (len(xs) + 1)\n")
    (tmp_path / "ws" / "test_stats.py").write_text("from stats import mean\n\n\ndef test_m():\n"
                                                   "    assert mean([1, 2, 3]) == 2\n")
    (tmp_path / "home" / "config").mkdir(parents=True)
    (tmp_path / "home" / "config" / "config.toml").write_text(f"test_command = {json.dumps(PYTEST)}\n")


@pytest.mark.parametrize("cols", [80, 60])
def test_the_repl_says_what_changed_when_the_answer_does_not(tmp_path, cols):
    _project(tmp_path)
    t = Term(tmp_path, [FIX, DOCSTRING], cols=cols, args=("--yes",))
    screen = Screen(t.child, cols)
    t.say("fix mean")
    screen.wait_for(t.child, "· 2 steps")
    assert screen.wait_until(t.child, lambda: ">" in screen.text().rpartition("· 2 steps")[2].split("\n"))  # prompt
    lines = screen.lines()
    said = [line for line in lines if line.startswith("✎ changed")]
    assert said == ["✎ changed stats.py (+1 -1) · tests pass"], screen.text()[-1500:]
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [80, 60])
def test_p_on_a_terminal_says_what_changed_when_the_answer_does_not(tmp_path, cols):
    _project(tmp_path)
    script = tmp_path / "s.json"
    script.write_text(json.dumps([FIX, DOCSTRING]))
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "--model", f"scripted:{script}", "-C",
                                           str(tmp_path / "ws"), "--yes", "-p", "fix mean"],
                          env=repl_env(tmp_path / "home"), dimensions=(40, cols), encoding="utf-8", timeout=60)
    screen = Screen(child, cols)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    assert "✎ changed stats.py (+1 -1) · tests pass" in screen.lines(), screen.text()[-800:]

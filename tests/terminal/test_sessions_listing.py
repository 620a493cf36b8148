"""`cli-agent sessions` on a terminal (a pyte screen at 60 and 80 columns): the first message gets room, on a line
of its own when the columns leave too little, and the footer's commands are whole."""

from __future__ import annotations

import json
import subprocess
import sys

import pexpect
import pytest
from screenkit import Screen
from termkit import repl_env

pytestmark = pytest.mark.slow

MESSAGE = "rename the helper in utils to something that says what it does, and update its callers"


@pytest.mark.parametrize("cols", [60, 80])
def test_sessions_at_narrow_widths_keep_the_message_and_the_commands(tmp_path, cols):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "done"}]))
    ws = tmp_path / "ws"
    ws.mkdir()
    env = repl_env(tmp_path / "home")
    made = subprocess.run([sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}", "-C", str(ws),
                           "-p", MESSAGE], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          timeout=120)
    assert made.returncode == 0, made.stderr
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "sessions", "-C", str(ws)], env=env,
                          dimensions=(40, cols), encoding="utf-8", timeout=60)
    screen = Screen(child, cols)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    lines = [line for line in screen.lines() if line]
    assert all(len(line) <= cols for line in lines)
    shown = next(line for line in lines if "rename the helper" in line)
    assert len(shown.strip().rstrip("…")) >= cols - 10  # the message fills its line, not 11 characters of it
    said = " ".join(lines)
    assert "cli-agent -c" in said and "cli-agent --resume ID" in said  # the commands whole, never cut

"""`!COMMAND` in the REPL, in a pseudo-terminal: the command runs in the sandbox, its change set is shown and
approved, its output is attached to the next message, and /undo reverts what it applied."""

from __future__ import annotations

import json
import sys

import pytest
from termkit import PROMPT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


@pytest.mark.slow
def test_bang_runs_in_the_sandbox_is_approved_attached_and_undone(repl, tmp_path) -> None:
    r = repl([{"text": "seen it"}])
    (r.ws / "keep.txt").write_text("old\n")
    r.say("!echo new > keep.txt; echo made > made.txt; echo OUT-$((6*7))")
    r.expect("OUT-42")  # the output, drawn once the command has ended
    r.expect("made.txt")  # then the change set's panel
    r.expect(r"Apply your command's changes\?")
    r.child.send("y")
    r.expect("Attach your command's output")
    r.child.send("\r")
    r.expect(PROMPT)
    assert (r.ws / "keep.txt").read_text() == "new\n" and (r.ws / "made.txt").read_text() == "made\n"
    r.say("what did it print?")
    r.expect("seen it")
    r.expect(PROMPT)
    r.say("/undo")
    r.expect("undid turn")
    r.expect(PROMPT)
    r.quit()
    assert (r.ws / "keep.txt").read_text() == "old\n" and not (r.ws / "made.txt").exists()
    request = next(rec for rec in r.records() if rec["type"] == "tool_result" and rec["tool"] == "run_command")
    assert request["envelope"]["data"]["exit_code"] == 0
    sent = [json.dumps(rec) for rec in r.records() if rec["type"] == "run_started"]
    assert sent  # the turns were recorded


@pytest.mark.slow
def test_bang_that_only_prints_asks_nothing(repl) -> None:
    r = repl([])
    r.say("!echo hi-$((1+1))")
    out = r.expect("Attach your command's output")
    assert "hi-2" in out and "Apply?" not in out
    r.child.send("n")
    r.expect("not attached")
    r.expect(PROMPT)
    assert r.quit() == 0


@pytest.mark.slow
def test_ctrl_c_kills_a_running_command_and_applies_nothing(repl) -> None:
    import os
    import time

    from sandboxkit import processes_matching

    tag = f"5{os.getpid() % 10000:04d}"
    r = repl([])
    r.say(f"!echo x > made.txt; echo STARTED; sleep 3{tag}")
    r.expect("STARTED")
    deadline = time.monotonic() + 30
    while not processes_matching(f"sleep 3{tag}") and time.monotonic() < deadline:
        time.sleep(0.05)
    r.child.sendcontrol("c")
    r.expect(PROMPT)
    time.sleep(0.3)
    assert processes_matching(f"sleep 3{tag}") == []
    assert not (r.ws / "made.txt").exists()
    assert r.quit() == 0


@pytest.mark.slow
@pytest.mark.parametrize("cols", [60, 100])
def test_bang_questions_are_worded_as_the_users_own_command_and_take_one_key(repl, cols) -> None:
    r = repl([], cols=cols)
    (r.ws / "keep.txt").write_text("old\n")
    r.say("!echo new > keep.txt; echo done-$((2*3))")
    legend = " ".join(r.expect(r"Apply your command's changes\?").split())
    assert "y yes, apply them · n no, leave the files as they are" in legend
    assert "tell the model" not in legend and "stop the turn" not in legend
    r.child.send("f")  # not an answer here: no model to tell
    r.expect("no: the files stay as they were")
    r.expect("Attach your command's output")
    r.child.send("\x1b")  # one key, as every question: Esc is no
    r.expect("not attached")
    r.expect(PROMPT)
    assert r.quit() == 0
    assert (r.ws / "keep.txt").read_text() == "old\n"


@pytest.mark.slow
def test_a_message_typed_while_the_command_runs_never_answers_attach_and_waits_at_the_prompt(repl) -> None:
    r = repl([{"text": "seen it"}])
    r.say("!sleep 1; echo STARTED-$((2+2))")
    r.child.send("yes do it")  # typed before the question is drawn
    r.expect("Attach your command's output")
    r.child.send("n")
    r.expect("not attached")
    r.expect(PROMPT)
    r.child.send("\r")  # the prompt starts with what was typed
    r.expect("seen it")
    r.expect(PROMPT)
    assert r.quit() == 0
    sent = [rec for rec in r.records() if rec["type"] == "run_started"]
    assert sent[-1]["prompt"] == "yes do it"

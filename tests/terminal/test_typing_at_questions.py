"""A sentence typed at a one-key question (the folder's trust, `!COMMAND`'s "attach the output?") answers nothing
and loses no key: it is drawn after the question, kept for the next prompt, and the question waits for its key."""

from __future__ import annotations

import sys

import pytest
from screenkit import Screen
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("cols", [60, 80])
def test_a_sentence_typed_at_the_trust_question_declines_nothing_and_stays_whole(tmp_path, cols):
    ws = tmp_path / "ws"
    (ws / ".cli-agent").mkdir(parents=True)
    (ws / ".cli-agent" / "config.toml").write_text("yes = true\n")
    t = Term(tmp_path, [{"text": "looked"}], cols=cols, wait=None)
    screen = Screen(t.child, cols)
    t.expect(r"Trust this folder\?")
    t.child.send("please look")
    screen.wait_for(t.child, "please look")
    t.child.send("\r")  # ends the line, answers nothing
    t.child.send("y")  # the question waited for its key
    t.expect("trusted")
    t.expect(PROMPT)
    assert screen.wait_until(t.child, lambda: "please look" in screen.text().split("trusted")[-1]), screen.text()
    t.child.send("\r")
    t.expect("looked")
    t.expect(PROMPT)
    assert t.quit() == 0
    sent = [rec for rec in t.traces() if rec["type"] == "run_started"]
    assert sent[-1]["prompt"] == "please look"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
@pytest.mark.parametrize("cols", [60, 80])
def test_a_question_typed_at_attach_is_not_sent_and_loses_no_letter(repl, cols) -> None:
    r = repl([{"text": "seen it"}], cols=cols)
    r.say("!echo hi > /dev/null")
    r.expect("Attach your command's output")
    r.child.send("what is in hi.txt?")  # "w" is no answer; the "n" of "in" must not answer either
    r.child.send("\r")
    r.child.send("n")
    r.expect("not attached")
    r.expect(PROMPT)
    r.child.send("\r")
    r.expect("seen it")
    r.expect(PROMPT)
    assert r.quit() == 0
    sent = [rec for rec in r.records() if rec["type"] == "run_started"]
    assert sent[-1]["prompt"] == "what is in hi.txt?"


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
@pytest.mark.parametrize("cols", [60, 80])
def test_a_one_key_question_wraps_between_words(tmp_path, cols) -> None:
    t = Term(tmp_path, [], cols=cols)
    screen = Screen(t.child, cols)
    t.say("!echo hi > /dev/null")
    t.expect("Attach your command's output")
    question = "Attach your command's output to your next message to the model? [Y/n, Esc: no]"
    assert screen.wait_until(t.child, lambda: "Esc: no]" in screen.text()), screen.text()[-1000:]
    lines = screen.lines()
    first = next(i for i, line in enumerate(lines) if line.startswith("Attach your"))
    drawn = lines[first:first + 3]
    words = " ".join(drawn).split()[:len(question.split())]
    assert words == question.split(), drawn  # no word cut at the edge of the screen
    t.child.send("n")
    t.expect(PROMPT)
    assert t.quit() == 0

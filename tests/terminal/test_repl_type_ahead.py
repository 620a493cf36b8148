"""Typing ahead in a pseudo-terminal (a pyte screen): a queued message is echoed as `> text` above its answer, a
half-typed line survives the queued turn it came after, and a line sent while `/model NAME` is being checked is
sent next, not thrown away."""

from __future__ import annotations

import pytest
from screenkit import Screen, Terms
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow


@pytest.fixture
def term(tmp_path):
    with Terms(tmp_path) as terms:
        yield terms.start


@pytest.mark.parametrize("cols", [60, 100])
def test_a_queued_message_is_echoed_and_a_half_typed_line_after_it_is_kept(term, cols):
    t, screen = term([{"text": "first answer", "delay": 4}, {"text": "second answer", "delay": 2},
                      {"text": "third answer"}], cols)
    t.say("first")
    t.expect("thinking")
    t.child.send("then this\r")
    t.expect("queued")
    t.child.send("half typ")
    t.expect("half typ")  # under the spinner
    t.expect("second answer")
    t.expect("· 1 step")  # the turn's last line (the "> " of the typed-ahead line under the spinner is not the prompt)
    t.expect(PROMPT)
    lines = screen.lines()
    at = {line: n for n, line in enumerate(lines)}
    assert at["> then this"] < at["second answer"]  # the queued message, echoed above its answer
    assert at["first answer"] < at["> then this"]
    t.child.send("ed\r")  # the half-typed line is at the prompt, to finish
    t.expect("third answer")
    t.expect(PROMPT)
    assert t.quit() == 0
    prompts = [r["prompt"] for r in t.traces() if r["type"] == "run_started"]
    assert prompts == ["first", "then this", "half typed"]


def test_a_line_sent_while_model_is_checking_is_sent_next(term):
    t, _screen = term([{"text": "still here"}], 80, env={"OPENAI_API_KEY": "sk-test-not-used"})
    t.say("/model gpt-5-typo")
    t.expect("checking")
    t.say("hello")
    t.expect("model not changed", timeout=120)
    t.expect("still here")
    t.expect(PROMPT)
    assert t.quit() == 0
    assert [r["prompt"] for r in t.traces() if r["type"] == "run_started"] == ["hello"]


@pytest.mark.parametrize("cols", [60, 100])
def test_a_long_paste_is_folded_in_the_input_and_sent_whole(term, cols):
    t, screen = term([{"text": "it is a KeyError"}], cols)
    trace = "".join(f"  File \"app.py\", line {i}, in f{i}\n" for i in range(1, 122)) + "KeyError: 'x'\n"
    t.child.send("explain this error: ")
    t.child.send("\x1b[200~" + trace + "\x1b[201~")  # a bracketed paste, as a terminal sends it
    t.expect(r"\[Pasted text #1 \+122 lines\]")
    t.child.send("\r")
    t.expect("it is a KeyError")
    t.expect(PROMPT)
    lines = screen.lines()
    assert "> explain this error: [Pasted text #1 +122 lines]" in lines  # the transcript keeps the fold
    assert not any("line 60, in f60" in line for line in lines)
    assert t.quit() == 0
    prompt = next(r["prompt"] for r in t.traces() if r["type"] == "run_started")
    assert prompt == "explain this error: " + trace.rstrip("\n")  # the model got all of it


@pytest.mark.parametrize("cols", [60, 100])
def test_keys_typed_while_the_first_line_waits_for_the_start_up_stay_out_of_the_output(tmp_path, cols):
    t = Term(tmp_path, [{"text": "hello back"}], cols=cols, wait=None)
    screen = Screen(t.child, cols)
    t.expect(PROMPT)
    t.say("hello")  # the session is still being made behind the prompt: the line waits for it
    t.child.send("typed meanwhile")
    t.expect("1 step")  # the turn's last line
    t.expect("typed meanwhile")  # the next prompt starts with it
    lines = screen.lines()
    typed = [line for line in lines if "typed meanwhile" in line]
    assert typed == ["> typed meanwhile"]  # kept for the next prompt, not echoed
    t.child.sendcontrol("u")
    assert t.quit() == 0

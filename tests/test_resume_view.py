"""A resumed session shows its transcript (the newest turns as they were, older ones folded) and the toolbar's
totals come back; driven in a pseudo-terminal with `cli-agent -c` after a real session."""

from __future__ import annotations

import pytest
from test_repl_terminal import _CONTROL, PROMPT, QUESTION, Term, create

pytestmark = pytest.mark.slow

USAGE = {"prompt_tokens": 1000, "completion_tokens": 200}


def test_continue_replays_the_transcript_and_restores_the_totals(tmp_path):
    first = Term(tmp_path, [{"text": "answer one", "usage": USAGE}, {"text": "answer two", "usage": USAGE},
                            {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}], "usage": USAGE},
                            {"tool_calls": [create("b.py", "print('b')\n")], "usage": USAGE},
                            {"text": "made b.py", "usage": USAGE},
                            {"text": "answer four", "usage": USAGE}, {"text": "answer five", "usage": USAGE}],
                 cols=80)
    (first.ws / "a.py").write_text("x = 1\n")
    for prompt, done in (("question one", "answer one"), ("question two", "answer two"),
                         ("make b", QUESTION), ("question four", "answer four"), ("question five", "answer five")):
        first.say(prompt)
        first.expect(done)
        if done == QUESTION:
            first.child.send("y")
            first.expect("made b.py")
        first.expect(PROMPT)
    assert first.quit() == 0
    again = Term(tmp_path, [{"text": "goes on"}], cols=80, args=("-c",), wait="goes on from here")
    seen = _CONTROL.sub("", again.child.before) + "goes on from here ──"
    again.expect(PROMPT)
    assert "› question one  → answer one" in seen and "› question two  → answer two" in seen  # folded
    assert "question three" not in seen
    for shown in ("› make b", "● Read(a.py) ⎿ 1 line", "create_file b.py", "print('b')", "  ✓ yes", "made b.py",
                  "› question four", "answer four", "› question five", "answer five"):
        assert shown in seen
    assert "── resumed: the conversation goes on from here ──" in seen
    again.say("/cost")
    again.expect(r"7,000 prompt \+ 1,400 completion tokens = 8,400")  # 7 replies: the totals came back
    again.expect(PROMPT)
    again.say("and then?")
    again.expect("goes on")
    again.expect(PROMPT)
    assert again.quit() == 0


def test_continue_after_clear_sends_only_what_followed_it(tmp_path):
    first = Term(tmp_path, [{"text": "answer one"}, {"text": "answer two"}], cols=80)
    first.say("question one")
    first.expect("answer one")
    first.expect(PROMPT)
    first.say("/clear")
    first.expect("started a new conversation")
    first.say("question two")
    first.expect("answer two")
    first.expect(PROMPT)
    assert first.quit() == 0
    again = Term(tmp_path, [{"text": "goes on"}], cols=80, args=("-c",), wait="goes on from here")
    seen = _CONTROL.sub("", again.child.before)
    assert "1 turn before the last /clear (not in the conversation)" in " ".join(seen.split())
    again.expect(PROMPT)
    again.say("question three")
    again.expect("goes on")
    again.expect(PROMPT)
    assert again.quit() == 0
    requests = [r for r in again.traces() if r["type"] == "model_request"]
    assert requests[-1]["messages"] == 4  # system, question two, answer two, question three

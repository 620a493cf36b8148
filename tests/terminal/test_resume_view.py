"""A resumed session shows its transcript (the newest turns as they were, older ones folded) and the toolbar's
totals come back; driven in a pseudo-terminal with `cli-agent -c` after a real session."""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from termkit import CONTROL, PROMPT, QUESTION, Term, create

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
    seen = CONTROL.sub("", again.child.before) + "goes on from here ──"
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


@pytest.mark.parametrize("cols", [60, 100])
def test_clear_starts_a_new_session_and_the_old_one_stays_to_resume(tmp_path, cols):
    first = Term(tmp_path, [{"text": "answer one"}, {"text": "answer two"}, {"text": "answer three"}], cols=cols)
    first.say("question one")
    first.expect("answer one")
    first.expect(PROMPT)
    first.say("/clear")
    said = " ".join((first.expect("the old one is session") + "the old one is session" + first.expect(PROMPT)).split())
    assert "started a new session: the model forgets the conversation" in said
    assert re.search(r"the old one is session (\w+): /resume, or cli-agent --resume \1", said)
    first.say("question two")
    first.expect("answer two")
    first.expect(PROMPT)
    first.say("/resume 1")  # the session before the /clear is still there
    first.expect("resumed session")
    first.expect(PROMPT)
    first.say("and again?")
    first.expect("answer three")
    first.expect(PROMPT)
    assert first.quit() == 0
    assert [r["messages"] for r in first.traces() if r["type"] == "model_request"][-1] == 4  # question one, ...
    listed = subprocess.run([sys.executable, "-m", "cli_agent", "sessions", "-C", str(first.ws)], capture_output=True,
                            text=True, env=first.child.env, timeout=60)
    assert listed.returncode == 0 and "question one" in listed.stdout and "question two" in listed.stdout




def test_the_resume_preview_lists_a_command_s_files_and_leaves_out_undone_ones(tmp_path):
    first = Term(tmp_path, [{"tool_calls": [create("a.txt")]}, {"text": "made a"},
                            {"tool_calls": [{"name": "run_command", "arguments": {"command": "echo hi > c.txt"}}]},
                            {"text": "made c"},
                            {"tool_calls": [create("d.txt")]}, {"text": "made d"}], cols=100)
    for prompt, done in (("make a", "made a"), ("make c", "made c"), ("make d", "made d")):
        first.say(prompt)
        first.expect(QUESTION)
        first.child.send("y")
        first.expect(done)
        first.expect(PROMPT)
    first.say("/undo")
    first.expect("undid turn")
    first.expect(PROMPT)
    assert first.quit() == 0
    assert not (first.ws / "d.txt").exists() and (first.ws / "c.txt").exists()
    again = Term(tmp_path, [{"text": "unused"}], cols=100)
    again.say("/resume")
    shown = again.expect("first message: make a")
    assert "files changed: a.txt, c.txt" in " ".join(shown.split())  # the command's file in, the undone one out
    assert "d.txt" not in shown
    again.child.send("\x1b")  # no session picked
    again.expect(PROMPT)
    assert again.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_a_resumed_workflow_turn_shows_what_was_typed_not_the_workflow_s_prompt(tmp_path, cols):
    first = Term(tmp_path, [{"text": "refactored it"}], cols=cols)
    (first.ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    first.say('/refactor calc.py "split add"')
    first.expect("refactored it")
    first.expect(PROMPT)
    assert first.quit() == 0
    again = Term(tmp_path, [{"text": "goes on"}], cols=cols, args=("-c",), wait="goes on from here")
    seen = " ".join(CONTROL.sub("", again.child.before).split())
    again.expect(PROMPT)
    assert re.search(r"resumed session \w+: /refactor calc\.py", seen)  # the session's first message too
    assert '› /refactor calc.py "split add"' in seen  # the turn as the user typed it
    assert "Refactor calc.py with this goal" not in seen and "Rules:" not in seen  # not the workflow's prompt
    assert again.quit() == 0


def test_a_file_undone_in_one_turn_but_kept_from_another_is_still_listed():
    from cli_agent.history.journal import Entry, Turn
    from cli_agent.ui.view.resume_view import _undone

    def turn(number: int, session: str, paths: list[str], undone: bool) -> Turn:
        entries = tuple(Entry(number, session, seq, 0.0, "edit_file", "edit", p, None, None, None)
                        for seq, p in enumerate(paths, 1))
        return Turn(number, session, 0.0, entries, undone)

    turns = [turn(1, "s1", ["a.py", "b.py"], False), turn(2, "s1", ["b.py", "c.py"], True),
             turn(3, "other", ["a.py"], True)]
    assert _undone("s1", turns) == {"c.py"}  # b.py keeps turn 1's change; another session's undo is not this one's


@pytest.mark.parametrize("cols", [60, 80])
def test_a_resumed_turn_is_drawn_as_it_was_diffs_commands_durations_and_undone_turns(tmp_path, cols):
    from screenkit import Screen

    read = {"name": "read_file", "arguments": {"path": "a.py"}}
    edit = {"name": "edit_file", "arguments": {"path": "a.py", "old": "x = 1", "new": "x = 2"}}
    command = {"name": "run_command", "arguments": {"command": "sleep 1; echo said; echo hi > c.txt"}}
    first = Term(tmp_path, [{"tool_calls": [read]}, {"tool_calls": [edit]}, {"text": "edited a"},
                            {"tool_calls": [command]}, {"text": "made c"},
                            {"tool_calls": [create("d.txt")]}, {"text": "made d"}], cols=cols)
    (first.ws / "a.py").write_text("x = 1\n")
    for prompt, done in (("edit a", "edited a"), ("make c", "made c"), ("make d", "made d")):
        first.say(prompt)
        first.expect(QUESTION)
        first.child.send("y")
        first.expect(done)
        first.expect(PROMPT)
    first.say("/undo")
    first.expect("undid turn")
    first.expect(PROMPT)
    assert first.quit() == 0
    again = Term(tmp_path, [{"text": "unused"}], cols=cols, args=("-c",), wait=None)
    screen = Screen(again.child, cols)
    again.expect("goes on from here")
    again.expect(PROMPT)
    lines = screen.lines()
    seen = "\n".join(lines)
    assert "-x = 1" in seen and "+x = 2" in seen and "old: x = 1" not in seen  # the diff, not the arguments
    assert "✓ edit_file a.py  edited (+1 -1 lines)" in seen
    assert "✓ create_file d.txt  created (+1 -0 lines)" in seen and "content: hi" not in seen
    at = {key: next(i for i, line in enumerate(lines) if key in line)
          for key in ("$ sleep 1", "│ said", "run_command", "1 create", "✓ run_command exit 0")}
    assert at["$ sleep 1"] < at["│ said"] < at["1 create"] < at["✓ run_command exit 0"]  # run, then asked
    steps = re.findall(r"· \d+ steps · (\d+\.\d)s", seen)
    assert len(steps) == 3 and float(steps[1]) >= 1.0  # the turns' real durations: the command slept 1 s
    assert re.search(r"› make d +↶ undone since \(/undo\)", seen)
    assert "› edit a" in seen and "edit a  ↶" not in seen
    assert again.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_the_resume_preview_wraps_between_words(tmp_path, cols):
    from screenkit import Screen

    said = ("please look at the configuration loader and tell me why the project settings_overrides_file is "
            "read twice at start-up")
    first = Term(tmp_path, [{"text": "looked"}], cols=cols)
    first.say(said)
    first.expect("looked")
    first.expect(PROMPT)
    assert first.quit() == 0
    again = Term(tmp_path, [{"text": "unused"}], cols=cols)
    screen = Screen(again.child, cols)
    again.say("/resume")
    assert screen.wait_until(again.child, lambda: "at start-up" in screen.text(), 20), screen.text()
    lines = screen.lines()
    at = next(i for i, line in enumerate(lines) if line.startswith("first message:"))
    shown = lines[at:next(i for i in range(at, len(lines)) if "start-up" in lines[i]) + 1]
    assert all(line.startswith("  ") for line in shown[1:])  # under itself, never at column 0
    assert " ".join(" ".join(shown).split()) == "first message: " + said  # no word cut
    again.child.send("\x1b")
    again.expect(PROMPT)
    assert again.quit() == 0

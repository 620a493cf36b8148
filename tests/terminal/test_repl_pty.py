"""The REPL a Claude Code or Codex user expects, driven in a pseudo-terminal at 80 and 60 columns against the
scripted model: the compact transcript, Esc, typing ahead, deny-with-feedback, Shift+Tab, the goodbye line."""

from __future__ import annotations

import re

import pexpect
import pytest
from termkit import PROMPT, QUESTION, Term, create

pytestmark = pytest.mark.slow



def read(path: str) -> dict:
    return {"name": "read_file", "arguments": {"path": path}}


@pytest.mark.parametrize("cols", [80, 60])
def test_reads_are_one_line_each_and_a_change_keeps_its_panel(term, cols):
    t = term([{"tool_calls": [read("a.py"), read("b.py"), {"name": "search", "arguments": {"pattern": "x"}}]},
              {"tool_calls": [create("c.py", "x = 3\n")]}, {"text": "all read"}], cols=cols)
    (t.ws / "a.py").write_text("x = 1\n")
    (t.ws / "b.py").write_text("x = 2\ny = 2\n")
    t.say("look around")
    seen = t.expect(QUESTION)
    assert "● Read(a.py) ⎿ 1 line" in seen
    assert "  Read(b.py) ⎿ 2 lines" in seen
    assert 'Search("x") ⎿ 2 matches in 2 files' in seen
    assert "create_file c.py" in seen and "x = 3" in seen  # the change's panel
    t.child.send("y")
    t.expect("all read")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_f_sends_the_feedback_to_the_model_and_the_turn_goes_on(term):
    t = term([{"tool_calls": [create("a.txt")]}, {"text": "ok, I will use b.txt instead"}], cols=80)
    t.say("make a file")
    t.expect(QUESTION)
    t.child.send("f")
    t.expect("what to do instead")
    t.say("call it b.txt")
    seen = t.expect("ok, I will use b.txt instead")
    assert "✗ no, and the model is told: call it b.txt" in seen
    t.expect(PROMPT)
    assert t.quit() == 0
    assert not (t.ws / "a.txt").exists()
    decided = next(r for r in t.traces() if r["type"] == "approval_decided")
    assert decided["decision"] == "feedback" and decided["feedback"] == "call it b.txt"


def test_esc_interrupts_a_reply(term):
    t = term([{"text": "never shown", "delay": 60}, {"text": "after the escape"}], cols=80)
    t.say("slow one")
    t.expect("Esc or Ctrl-C interrupts")
    t.child.send("\x1b")
    t.expect("interrupted: nothing was half-written")
    t.expect(PROMPT)
    t.say("next")
    t.expect("after the escape")
    t.expect(PROMPT)
    assert t.quit() == 0
    finished = [r["stop_reason"] for r in t.traces() if r["type"] == "run_finished"]
    assert finished == ["interrupted", "done"]


def test_text_typed_during_a_turn_is_shown_queued_and_sent_next(term):
    t = term([{"text": "first answer", "delay": 4}, {"text": "second answer"}], cols=80)
    t.say("first")
    t.expect("thinking")
    t.child.send("then this\r")
    t.expect("then this")  # echoed under the spinner
    t.expect("queued")
    t.expect("first answer")
    t.expect("second answer")  # sent without being typed again
    t.expect(PROMPT)
    assert t.quit() == 0
    prompts = [r["prompt"] for r in t.traces() if r["type"] == "run_started"]
    assert prompts == ["first", "then this"]


def test_shift_tab_cycles_the_approval_mode_in_the_toolbar_and_grants_show(term):
    t = term([{"tool_calls": [create("a.txt")]}, {"text": "made"}], cols=120, env={"PROMPT_TOOLKIT_NO_CPR": None})
    t.expect(r"\(⇧Tab\)")  # the toolbar, once the settings are in (drawn over "starting…", only where it changed)
    t.child.send("\x1b[Z")  # Shift+Tab (the toolbar is redrawn only where it changed: /approval says it whole)
    t.say("/approval")
    t.expect("approval: plan: read only")  # default → plan → edits → all → default
    t.child.send("\x1b[Z")
    t.say("/approval")
    t.expect("approval: edits: creating and editing files is approved")
    t.child.send("\x1b[Z")
    t.child.send("\x1b[Z")
    t.say("/approval")
    t.expect("approval: ask: every change is asked for")
    t.say("make a")
    t.expect(QUESTION)
    t.child.send("t")
    t.expect("made")
    t.expect(r"\+create_file")  # the toolbar again: the grant shows
    assert t.quit() == 0


def test_ctrl_d_prints_the_session_id_and_how_to_resume_it(term):
    t = term([{"text": "hello"}], cols=80)
    t.say("hi")
    t.expect("hello")
    t.expect(PROMPT)
    t.child.sendcontrol("d")
    rest = t.expect(pexpect.EOF)
    found = re.search(r"session (\w+) · resume it with: cli-agent --resume (\w+)\n", rest.replace("\r", ""))
    assert found is not None and found.group(1) == found.group(2)


def test_p_in_a_terminal_draws_like_the_repl_and_offers_no_session_grants(term, tmp_path):
    t = term([{"tool_calls": [read("a.py")]}, {"tool_calls": [create("b.py", "y = 2\n")]},
              {"text": "made **b.py**"}], cols=80, args=("-p", "make b.py"), wait=None)
    (t.ws / "a.py").write_text("x = 1\n")
    seen = t.expect(QUESTION)
    assert "● Read(a.py) ⎿ 1 line" in seen and "create_file b.py" in seen
    assert "→" not in seen  # no raw "→ tool {json}" line
    legend = " ".join(seen.split())
    assert "y yes · n no, stop the turn · f no, and tell the model what to do instead" in legend
    assert "this session" not in legend  # a/t grant for later turns a one-shot run does not have
    t.child.send("y")
    rest = t.expect(pexpect.EOF)
    last = [line.strip() for line in rest.splitlines() if line.strip()][-3:]
    assert last[0] == "made b.py"  # the answer as Markdown (the raw text only streamed in the live region)
    assert last[1] == "! not verified: no tests found (set test_command)"  # a change with no proof says so
    assert last[2].startswith("· 3 steps")
    t.child.close()
    assert t.child.exitstatus == 0 and (t.ws / "b.py").read_text() == "y = 2\n"


def test_ctrl_c_while_an_answer_streams_keeps_it_marked_interrupted(term):
    t = term([{"text": "The bug is in parse(), where the loop", "chunks": ["The bug is in parse(), ", "where the loop"],
               "chunk_delay": 60}, {"text": "next answer"}], cols=80)
    t.say("where is the bug?")
    t.expect("The bug is in parse")  # streaming in the live region
    t.child.sendcontrol("c")
    seen = t.expect(r"\(interrupted\)")
    assert "The bug is in parse()," in seen[seen.rindex("interrupts"):]  # printed above the mark, not erased
    t.expect("interrupted: nothing was half-written")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_a_read_cut_for_the_model_says_what_it_got_in_its_own_line(term, tmp_path):
    t = term([{"tool_calls": [read("big.txt")]}, {"text": "read it"}], cols=80,
             env={"CLI_AGENT_TOOL_RESULT_MAX_CHARS": "2000"})
    (t.ws / "big.txt").write_text("".join(f"line {i}\n" for i in range(1, 1001)))
    t.say("read big.txt")
    seen = t.expect("read it")
    line = next(x for x in seen.splitlines() if "Read(big.txt)" in x)
    got = re.search(r"● Read\(big\.txt\) ⎿ lines 1-(\d+) of 1,000 +\(cut to fit: the model got 2,000 of", line)
    assert got is not None and 100 < int(got.group(1)) < 1000
    assert "too long for the model" not in seen  # no separate warning above the call
    t.expect(PROMPT)
    assert t.quit() == 0


def test_v_pages_the_whole_creation_before_answering(term):
    body = "".join(f"row {i}\n" for i in range(200))
    t = term([{"tool_calls": [create("big.txt", body)]}, {"text": "made"}], cols=80, env={"PAGER": "cat"})
    t.say("make it")
    assert "row 199" not in t.expect(QUESTION)  # folded in the panel
    t.child.send("v")
    t.expect("row 199")  # the pager got all of it
    t.expect(QUESTION)  # and the question comes back
    t.child.send("y")
    t.expect("made")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_a_bad_model_name_is_refused_in_one_line_and_the_model_stays(term):
    t = term([{"text": "still here"}], cols=80, env={"OPENAI_API_KEY": "sk-test-not-used"})
    t.say("/model gpt-5-typo")
    t.expect("model not changed: LiteLLM cannot tell which provider serves 'gpt-5-typo'", timeout=120)
    t.expect(PROMPT)
    t.say("hello")
    t.expect("still here")  # the scripted model still answers
    t.expect(PROMPT)
    assert t.quit() == 0


def test_compact_diff_and_undo_list_in_the_repl(term):
    t = term([{"tool_calls": [create("a.txt", "alpha\n")]}, {"text": "made a"},
              {"text": "- made a.txt with alpha"}, {"text": "fine"}], cols=80)
    t.say("make a")
    t.expect(QUESTION)
    t.child.send("y")
    t.expect("made a")
    t.expect(PROMPT)
    t.say("/diff")
    assert "+alpha" in t.expect(r"1 file changed this session, \+1 -0 lines")
    t.say("/undo list")
    assert "'make a'" in t.expect("newest")
    t.say("/compact")
    t.expect("compacted: the summary above replaces the conversation")
    t.expect(PROMPT)
    t.say("go on")
    t.expect("fine")
    t.expect(PROMPT)
    assert t.quit() == 0
    resets = [r for r in t.traces() if r["type"] == "conversation_reset"]
    assert [r["kind"] for r in resets] == ["compact"]
    assert resets[0]["summary"].endswith("[The model's summary of the rest]\n- made a.txt with alpha")
    assert "1. make a" in resets[0]["summary"] and "- turn 1: a.txt" in resets[0]["summary"]
    asked = [r["messages"] for r in t.traces() if r["type"] == "model_request"]
    assert asked[-1] == 4  # system, the summary, its acknowledgement, "go on"


@pytest.mark.parametrize("cols", [60, 100])
def test_shift_tab_while_the_model_works_changes_the_mode_for_the_calls_to_come(term, cols):
    t = term([{"tool_calls": [create("a.txt")], "delay": 8}, {"text": "made it"}], cols=cols)
    t.say("make a.txt")
    t.expect("⇧Tab: ask")  # the spinner's line says the mode
    t.child.send("\x1b[Z")  # Shift+Tab during the turn: plan, then edits
    t.expect("⇧Tab: plan")
    t.child.send("\x1b[Z")
    t.expect("⇧Tab: edits")
    assert t.child.expect([QUESTION, "made it"], timeout=60) == 1  # applied without asking
    t.expect(PROMPT)
    assert t.quit() == 0
    assert (t.ws / "a.txt").read_text() == "hi\n"


def test_undo_of_a_turn_not_in_the_journal_points_to_undo_list(term):
    t = term([{"tool_calls": [create("a.txt", "x\n")]}, {"text": "made"}], cols=80)
    t.say("make a")
    t.expect(QUESTION)
    t.child.send("y")
    t.expect("made")
    t.expect(PROMPT)
    t.say("/undo 99")
    t.expect("turn 99 is not in the undo journal of")
    said = "".join(t.expect(PROMPT).split())
    assert said.endswith("(see/undolist)")  # the REPL's own command (the line may wrap anywhere in the path)
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_help_summaries_wrap_under_their_column_never_to_column_0(tmp_path, cols):
    from screenkit import Screen

    t = Term(tmp_path, [], cols=cols, wait=None)
    screen = Screen(t.child, cols)
    t.expect(PROMPT)
    t.say("/help")
    t.expect("Approval answers")
    t.expect(PROMPT)
    lines = screen.lines()
    start = next(i for i, x in enumerate(lines) if x == "commands:") + 1
    listing = lines[start:next(i for i, x in enumerate(lines) if i > start and x.startswith("  workflow"))]
    assert all(line.startswith("  ") or not line for line in listing)
    column = lines[next(i for i, x in enumerate(lines) if x.startswith("  /approval"))].index("show or set")
    wrapped = [line for line in listing if line.startswith(" " * column) and line.strip()]
    assert all(len(line) - len(line.lstrip()) == column for line in wrapped)  # under the summary's first letter
    if cols == 60:  # narrow: one line a command, its summary cut
        assert not wrapped and all(line.lstrip().startswith("/") for line in listing if line)
    assert t.quit() == 0


def test_tab_completes_a_workflow_path_parameter_from_the_workspace(term):
    t = term([{"text": "hello"}, {"text": "explained"}], cols=80)
    (t.ws / "calculator.py").write_text("x = 1\n")
    t.say("hi")  # the start-up is done (the workflows and the workspace are known)
    t.expect("hello")
    t.expect(PROMPT)
    t.child.send("/explain calc")
    t.expect("calculator.py")  # offered while typing
    t.child.send("\t")
    t.child.send("\r")  # takes the completion
    t.child.send("\r")  # sends
    t.expect("explained")
    t.expect(PROMPT)
    assert t.quit() == 0
    started = [r for r in t.traces() if r["type"] == "run_started"][-1]
    assert "calculator.py" in started["prompt"]

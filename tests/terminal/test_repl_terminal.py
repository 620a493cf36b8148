"""The real program in a pseudo-terminal (pexpect), driven by the scripted provider: what a person at the REPL sees
and what happens to the workspace when they answer."""

from __future__ import annotations

import os
import re
import signal
import sys
import time

import pytest
from termkit import CONTROL, PROMPT, QUESTION, create

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow  # a real REPL in a pty: seconds a test


def test_chat_answer_renders_as_markdown_with_markup_left_alone_and_at_path_attached(term):
    t = term([{"text": "the file says **hello** and [red]stays[/red]"}])
    (t.ws / "notes.txt").write_text("hello from notes\n")
    t.say("what is in @notes.txt?")
    seen = t.expect(r"· 1 step")
    assert "attached notes.txt (1 lines)" in seen
    assert "the file says hello and [red]stays[/red]" in seen  # Markdown rendered, Rich markup not interpreted
    t.expect(PROMPT)
    assert t.quit() == 0
    started = next(r for r in t.traces() if r["type"] == "run_started")
    assert "hello from notes" in started["prompt"]


def test_n_leaves_the_workspace_unchanged_and_ends_the_turn(term):
    t = term([{"tool_calls": [create("hello.py", "print('hi')\n")]}, {"text": "second turn answer"}])
    t.say("make hello.py")
    seen = t.expect(QUESTION)
    assert "create_file hello.py" in seen and "print('hi')" in seen
    t.child.send("n")
    t.expect("stopped: ")
    t.expect(PROMPT)
    assert not (t.ws / "hello.py").exists()
    t.say("and now?")  # the denied turn did not ask the model again: its next reply is still unused
    t.expect("second turn answer")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_y_writes(term):
    t = term([{"tool_calls": [create("hello.py", "print('hi')\n")]}, {"text": "written"}])
    t.say("make hello.py")
    t.expect(QUESTION)
    t.child.send("y")
    seen = t.expect(r"· 2 steps")
    assert "✓ create_file hello.py  created (+1 -0 lines)" in seen
    assert (t.ws / "hello.py").read_text() == "print('hi')\n"
    t.expect(PROMPT)
    assert t.quit() == 0


def test_a_approves_the_rest_of_the_turn_and_later_changes_without_asking(term):
    t = term([{"tool_calls": [create("a.txt"), create("b.txt")]}, {"text": "both done"},
              {"tool_calls": [create("c.txt")]}, {"text": "third done"}])
    t.say("make two files")
    seen = t.expect(QUESTION)
    assert "a yes to these 2 and every later change this session" in " ".join(seen.split())
    t.child.send("a")
    t.expect("both done")
    t.expect(PROMPT)
    t.say("one more")
    t.expect("third done")  # a second question would block here until the timeout
    assert {p.name for p in t.ws.iterdir()} == {"a.txt", "b.txt", "c.txt"}
    t.expect(PROMPT)
    assert t.quit() == 0


def test_ctrl_c_at_the_approval_question_is_a_no(term):
    t = term([{"tool_calls": [create("hello.py")]}])
    t.say("make hello.py")
    t.expect(QUESTION)
    t.child.sendcontrol("c")
    t.expect("stopped: ")
    t.expect(PROMPT)
    assert not (t.ws / "hello.py").exists()
    assert t.quit() == 0


def test_ctrl_c_during_a_slow_reply_returns_to_the_prompt_and_the_next_message_works(term):
    t = term([{"text": "too late", "delay": 30}, {"text": "after the cancel"}])
    t.say("slow one")
    t.expect("thinking")
    started = time.monotonic()
    t.child.sendcontrol("c")
    t.expect("interrupted: nothing was half-written")
    t.expect(PROMPT)
    assert time.monotonic() - started < 20  # generous for a loaded machine, and well short of the reply's 30 s
    t.say("next")
    t.expect("after the cancel")
    t.expect(PROMPT)
    assert t.quit() == 0
    finished = [r for r in t.traces() if r["type"] == "run_finished"]
    assert [r["stop_reason"] for r in finished] == ["interrupted", "done"]


def test_ctrl_c_on_an_empty_prompt_says_how_to_quit_and_ctrl_d_exits_0(term):
    t = term([])
    t.child.sendcontrol("c")
    t.expect(r"press Ctrl-C again within 2 s to quit \(or Ctrl-D, /exit\)")
    t.expect(PROMPT)
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_a_second_ctrl_c_at_an_empty_prompt_quits_with_the_goodbye_line(term, cols):
    t = term([{"text": "hello"}], cols=cols)
    t.say("hi")
    t.expect("hello")
    t.expect(PROMPT)
    t.child.sendcontrol("c")
    t.expect("again within 2 s to quit")
    t.expect(PROMPT)
    t.child.sendcontrol("c")  # sent as soon as the prompt is back: well within the two seconds
    rest = t.expect(pexpect.EOF)
    assert "resume it with: cli-agent --resume" in " ".join(rest.split())
    t.child.close()
    assert t.child.exitstatus == 0


def test_escape_sequences_in_a_path_are_shown_not_interpreted(term):
    t = term([{"tool_calls": [create("evil\x1b[2J\u202e.txt")]}])
    t.say("make it")
    seen = t.expect_raw(QUESTION)
    assert "evil\\x1b[2J\\u202e.txt" in CONTROL.sub("", seen)
    assert "\x1b[2J" not in seen and "\u202e" not in seen
    t.child.send("n")
    t.expect(PROMPT)
    assert t.quit() == 0


def test_help_lists_the_commands_and_an_unknown_command_suggests(term):
    t = term([])
    t.say("/help")
    t.expect("Approval answers")  # the keys first, then the commands
    seen = t.expect(PROMPT)
    for name in ("help", "exit", "clear", "model", "approval", "tools", "prompt", "workflows", "facts", "trace",
                 "cost"):
        assert f"/{name}" in seen
    t.say("/aproval")
    assert "unknown command /aproval, did you mean /approval" in t.expect("lists the commands")
    t.expect(PROMPT)
    assert t.quit() == 0
    assert not (t.home / "state" / "traces").exists() or all(r["type"] != "run_started" for r in t.traces())


def test_sigterm_during_a_turn_exits_143_with_a_complete_trace(term):
    t = term([{"text": "never", "delay": 30}])
    t.say("slow one")
    t.expect("thinking")
    t.child.kill(signal.SIGTERM)
    t.child.expect(pexpect.EOF)
    t.child.close()
    assert t.child.exitstatus == 143
    assert t.traces()[-1]["type"] == "run_finished" and t.traces()[-1]["stop_reason"] == "terminated"


def test_the_prompt_is_drawn_before_litellm_pydantic_or_rich_markdown_is_imported(tmp_path):
    """-X importtime prints each import as it completes: the prompt comes before LiteLLM, pydantic (the config),
    jsonschema (the specs and workflows) and Rich's Markdown and Pygments, which load behind it (REPL ready ≤ 0.25 s;
    Rich's core, which the terminal views stand on, comes with them); a plain start with root flags only never
    imports Typer (click may come later, with LiteLLM's httpx)."""
    args = ["-X", "importtime", "-m", "cli_agent", "--model", "openai/gpt-4o-mini", "-C", str(tmp_path)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k != "CI"}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1",
            "OPENAI_API_KEY": "sk-test-not-used"}
    child = pexpect.spawn(sys.executable, args, env=env, dimensions=(40, 140), encoding="utf-8", timeout=30)
    try:
        child.expect(r"\x1b\[0;36;1m> ")
        assert "/help for help" in child.before  # the banner, then the prompt
        for heavy in ("litellm", "pydantic", "jsonschema", "rich.markdown", "rich.syntax", "pygments"):
            assert not re.search(rf"\| +{heavy}(\.|\r|$)", child.before, re.M), heavy
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=60)
        assert not re.search(r"\| +typer(\.|\r|$)", child.before, re.M)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0


@pytest.mark.parametrize("problem", ["bad config", "missing session"])
def test_a_start_up_failure_ends_the_repl_with_its_one_line_and_exit_2(tmp_path, problem):
    """The config loads behind the prompt, a session to continue before it: either way one line, exit 2."""
    home = tmp_path / "home"
    (home / "config").mkdir(parents=True)
    if problem == "bad config":
        (home / "config" / "config.toml").write_text("max_steps = 'many'\n")
    args = ["-m", "cli_agent", "--model", "scripted:x.json", "-C", str(tmp_path)]
    args += ["--resume", "nosuchsession"] if problem == "missing session" else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k != "CI"}
    env |= {"CLI_AGENT_HOME": str(home), "TERM": "xterm", "PROMPT_TOOLKIT_NO_CPR": "1"}
    child = pexpect.spawn(sys.executable, args, env=env, dimensions=(40, 140), encoding="utf-8", timeout=30)
    try:
        child.expect("cli-agent: (.*)\r\n")
        line = child.match.group(1)
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 2
    assert ("max_steps" in line and "config.toml" in line) if problem == "bad config" else "nosuchsession" in line

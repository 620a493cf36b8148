"""Text that wraps between words under its own start, at 60 and 80 columns (a pyte screen), where it was printed
unwrapped: a one-line error on stderr and in the REPL, the `f` feedback and its answer line, `/undo list`,
`cli-agent sandbox` and `cli-agent tools`."""

from __future__ import annotations

import os
import sys

import pexpect
import pytest
from screenkit import Screen, Terms
from termkit import PROMPT, QUESTION, create

from cli_agent.tools.registry import Registry

pytestmark = pytest.mark.slow


def _run(tmp_path, cols: int, *args: str) -> list[str]:
    """`cli-agent ARGS` in a pseudo-terminal `cols` wide, to its end: the screen's lines."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "TERM": "xterm"}
    env.pop("COLUMNS", None)
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", *args], env=env, dimensions=(40, cols),
                          encoding="utf-8", timeout=60, cwd=str(tmp_path))
    screen = Screen(child, cols)
    child.expect(pexpect.EOF)
    child.close()
    return screen.lines()


def _whole_words(lines: list[str], cols: int) -> None:
    """No line filled to the last column (the terminal's own wrap, which cuts a word), but for one word (a path)
    longer than the width, and a line cut with `…`."""
    cut = [line for line in lines if len(line) >= cols and " " in line.strip() and not line.endswith("…")]
    assert not cut, cut


@pytest.mark.parametrize("cols", [60, 80])
def test_a_one_line_error_on_stderr_wraps_under_its_message(tmp_path, cols):
    lines = [line for line in _run(tmp_path, cols, "--api-base", "localhost:8080", "-p", "hi") if line]
    at = next(i for i, line in enumerate(lines) if line.startswith("cli-agent: flag --api-base"))
    error = lines[at:]
    _whole_words(error, cols)
    assert len(error) > 1 and all(line.startswith(" " * len("cli-agent: ")) for line in error[1:])
    said = " ".join(" ".join(error).split())
    assert said == ("cli-agent: flag --api-base: expected a URL starting with http:// or https://, found "
                    "'localhost:8080' (did you mean 'http://localhost:8080'?)")


@pytest.mark.parametrize("cols", [60, 80])
def test_cli_agent_sandbox_wraps_its_rows_under_themselves(tmp_path, cols):
    lines = [line for line in _run(tmp_path, cols, "sandbox") if line]
    _whole_words(lines, cols)
    rows = lines[lines.index("what a command can read, write and reach:") + 1:]
    said = " ".join(" ".join(lines).split())
    assert "the environments PATH's folders belong to, whole: a venv (and VIRTUAL_ENV) with the interpreter" in said
    assert "-> the call's timeout_s, at most command_timeout_max and never past the run's deadline" in said
    table = rows[:next(i for i, line in enumerate(rows) if not line.startswith(" "))]
    assert len(table) > 30 and all(line.startswith("  ") for line in table)
    indents = {len(line) - len(line.lstrip()) for line in table}
    assert indents <= {2, 4, 6, 9}, indents  # a row, its continuation; its answer (`-> `), the answer's continuation
    assert all(line.lstrip().startswith("->") for line in table if len(line) - len(line.lstrip()) == 6)


@pytest.mark.parametrize("cols", [60, 80])
def test_cli_agent_tools_keeps_one_column_for_every_tool(tmp_path, cols):
    lines = [line for line in _run(tmp_path, cols, "tools") if line]
    tools = [line for line in lines if line.startswith("  ")]
    _whole_words([line for line in lines if line not in tools], cols)
    first = {s.name: s.description.split(". ")[0].rstrip(".") for s in Registry.builtin().specs()}
    for line in tools:  # its description's first sentence whole, or cut with `…`: it may fill the width exactly
        assert line.endswith("…") or line.removesuffix(" (optional)").endswith(first[line.split()[0]]), line
    names = {"edit_file", "replace_definition", "replace_lines", "web_fetch", "update_plan", "task", "read_file"}
    assert names <= {line.split()[0] for line in tools}
    starts = {len(line) - len(line[2:].lstrip(" ").split(" ", 1)[1].lstrip(" *")) for line in tools}
    assert len(starts) == 1, tools  # every description starts in the same column
    assert "* asks before it runs" in lines


@pytest.mark.parametrize("cols", [60, 80])
def test_the_f_feedback_and_its_answer_wrap_under_themselves(tmp_path, cols):
    feedback = ("please call the new file something_much_longer.py instead and put a docstring at its top "
                "saying what it holds")
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create("a.txt")]}, {"text": "will do"}], cols)
        t.say("make a file")
        t.expect(QUESTION)
        t.child.send("f")
        t.expect("what to do instead")
        t.say(feedback)
        t.expect("will do")
        t.expect(PROMPT)
        lines = screen.lines()
        asked = next(i for i, line in enumerate(lines) if "tell the model what to do instead" in line)
        told = next(i for i, line in enumerate(lines) if "✗ no, and the model is told:" in line)
        done = next(i for i, line in enumerate(lines) if line.startswith("will do"))
        _whole_words(lines[asked:told], cols + 1)  # the typed line may fill its rows: it goes on under itself
        assert all(line.startswith("  ") for line in lines[asked:done] if line)
        assert told + 1 < done and all(line.startswith("    ") for line in lines[told + 1:done] if line)
        said = " ".join(" ".join(lines[told:done]).split())
        assert said == "✗ no, and the model is told: " + feedback
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_undo_list_and_a_repl_error_wrap_under_themselves(tmp_path, cols):
    name = "a_rather_long_module_name_for_this_test.py"
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create(name)]}, {"text": "made it"}], cols,
                                config='approval = "edits"\n')
        t.say("/undo")
        t.expect("nothing to undo")
        t.expect(PROMPT)
        t.say("make the module with a fairly long prompt that goes on and on for a while")
        t.expect("made it")
        t.expect(PROMPT)
        t.say("/undo list")
        t.expect("newest")
        t.expect(PROMPT)
        lines = screen.lines()
        error = next(i for i, line in enumerate(lines) if line.startswith("nothing to undo in"))
        rest = lines[error + 1:next(i for i in range(error + 1, len(lines)) if lines[i].startswith(">"))]
        assert rest and all(line.startswith("  ") for line in rest if line)
        said = " ".join(" ".join(lines[error:error + len(rest) + 1]).split())
        whole = f"nothing to undo in {t.ws}: cli-agent has not changed a file here"
        assert said.replace(" ", "") == whole.replace(" ", "")
        assert said.endswith(": cli-agent has not changed a file here")  # the path alone is cut: it is one word
        turn = next(i for i, line in enumerate(lines) if line.startswith("turn 1 "))
        listing = lines[turn:next(i for i in range(turn, len(lines)) if lines[i].startswith(">"))]
        listing = [line for line in listing if line]
        _whole_words(listing, cols)
        assert len(listing) > 2 and all(line.startswith("  ") for line in listing[1:])
        assert any(name in line for line in listing)
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_the_f_feedback_stays_on_its_row_while_typed_no_word_split(tmp_path, cols):
    feedback = ("please call the new file something_much_longer.py instead and put a docstring at its top "
                "saying what it holds")
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [create("a.txt")]}, {"text": "will do"}], cols)
        t.say("make a file")
        t.expect(QUESTION)
        t.child.send("f")
        t.expect("what to do instead")
        t.child.send(feedback)  # typed, not yet sent
        assert screen.wait_until(t.child, lambda: any(line.endswith("what it holds") for line in screen.lines()), 20)
        lines = screen.lines()
        typed = next(i for i, line in enumerate(lines) if line.startswith("  › "))
        assert lines[typed].endswith("saying what it holds")  # scrolled to where the cursor is
        assert not any(line.strip() for line in lines[typed + 1:])  # nothing went on to a row of its own
        t.child.send("\r")
        t.expect("will do")
        t.expect(PROMPT)
        said = " ".join(" ".join(screen.lines()).split())
        assert "✗ no, and the model is told: " + feedback in said
        assert t.quit() == 0

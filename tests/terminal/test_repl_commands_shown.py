"""Every command the model runs, as a person sees it in a pseudo-terminal (a pyte screen at 60 and 100 columns):
`$ COMMAND` whole, a spinner with the time while it runs, its output drawn once by whole lines inside the `│`
margin with what was left out, all of it under /expand; in `edits` mode the diff of a change set applied unasked;
and `v` at an approval paging with `less`, its colours shown rather than their escape codes."""

from __future__ import annotations

import re
import sys

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]

DOTS = "." * 110
TEST_RUN = ("for i in $(seq 1 40); do echo line $i; done; printf 'tests/test_calc.py ...'; sleep 0.3; printf '..'; "
            f"sleep 2; echo '{DOTS} [100%]'")


@pytest.fixture
def term(tmp_path):
    with Terms(tmp_path) as terms:
        yield terms.start


def command(cmd: str) -> dict:
    return {"name": "run_command", "arguments": {"command": cmd}}


def block_after(lines: list[str], start: str, end: str) -> list[str]:
    first = next(i for i, line in enumerate(lines) if line.startswith(start))
    last = next(i for i in range(first, len(lines)) if lines[i].startswith(end))
    return lines[first:last]


@pytest.mark.parametrize("cols", [60, 100])
def test_a_command_run_unasked_shows_its_whole_line_a_spinner_and_its_output_once(term, cols):
    t, screen = term([{"tool_calls": [command(TEST_RUN)]}, {"text": "the tests pass"}], cols)
    t.say("run the tests")
    t.expect(r"running \d+\.\ds\S*  Esc or Ctrl-C interrupts")  # the spinner and the time while it runs
    t.expect("the tests pass")
    t.expect(PROMPT)
    lines = screen.lines()
    shown = block_after(lines, "$ ", "  │")  # the command, wrapped under itself, never cut
    assert "".join("".join(line.removeprefix("$ ").split()) for line in shown) == "".join(TEST_RUN.split())
    assert all(line.startswith("  ") for line in shown[1:])
    output = block_after(lines, "  │", "  ✓ run_command exit 0")
    assert all(line.startswith("  │ ") for line in output)  # every screen line inside the margin
    assert output[0] == "  │ … 29 earlier lines (/expand)"
    assert next(line for line in output if "line " in line) == "  │ line 30"
    assert "  │ tests/test_calc.py" in output and any(line.endswith("[100%]") for line in output)
    text = screen.text()
    assert text.count("line 40") == 1  # drawn once
    assert len([line for line in lines if line.startswith("  │") and line.endswith("[100%]")]) == 1
    assert "approved by" not in text  # that a sandboxed command may run is not news
    t.say("/expand")
    t.expect("changes: no file changes")
    t.expect(PROMPT)
    after = screen.lines()
    expanded = after[max(i for i, line in enumerate(after) if line.startswith("> /expand")):]
    assert "  │ line 1" in expanded and "  │ line 40" in expanded  # all of it, afterwards
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_in_edits_mode_a_command_change_set_applied_unasked_shows_its_diff(term, cols, tmp_path):
    t, screen = term([{"tool_calls": [command("sed -i s/hello/goodbye/ README.md")]}, {"text": "changed it"}], cols,
                     env={"CLI_AGENT_APPROVAL": "edits"})
    (t.ws / "README.md").write_text("hello world\n")
    t.say("say goodbye")
    t.expect("changed it")
    t.expect(PROMPT)
    text = screen.text()
    assert "$ sed -i s/hello/goodbye/ README.md" in text
    assert re.search(r"^.*-hello world", text, re.M) and re.search(r"^.*\+goodbye world", text, re.M)
    assert 'approved by approval = "edits"' in " ".join(text.split())
    assert (t.ws / "README.md").read_text() == "goodbye world\n"
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_v_pages_with_less_showing_colours_not_escape_codes(term, cols):
    body = "".join(f"row {i}\n" for i in range(200))
    t, screen = term([{"tool_calls": [{"name": "create_file", "arguments": {"path": "big.txt", "content": body}}]},
                      {"text": "made"}], cols, env={"PAGER": None, "LESS": None})
    t.say("make it")
    t.expect(r"Apply\?")
    t.child.send("v")
    t.expect("row 1")  # less shows the start of the whole creation
    seen = screen.text()
    assert "ESC[" not in seen and "\\x1b" not in seen  # the colours were drawn, not shown as codes
    t.child.send("q")
    t.expect(r"Apply\?")
    t.child.send("y")
    t.expect("made")
    t.expect(PROMPT)
    assert t.quit() == 0

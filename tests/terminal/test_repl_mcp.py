"""An MCP server's tools at the REPL, as a person sees them in a pseudo-terminal (a pyte screen at 60 and 100
columns): each result summed up in one line that fits the width, a call that changes no file asked about as a call
to run (not a change to apply), with the server's read-only claim shown; a server that cannot start said at
start-up, before any message is sent. Real servers (tests/mcp_servers/)."""

from __future__ import annotations

import json
import sys

import pytest
from places import MCP_SERVERS
from screenkit import Terms
from termkit import PROMPT

pytestmark = pytest.mark.slow

SERVERS = MCP_SERVERS


def server_table(name: str, args: list[str], extra: str = "") -> str:
    return f'[mcp_servers.{name}]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps(args)}\n{extra}\n'


@pytest.fixture
def term(tmp_path):
    with Terms(tmp_path) as terms:
        yield terms.start


def call(name: str, **arguments) -> dict:
    return {"name": name, "arguments": arguments}


def lines_with(lines: list[str], text: str) -> list[str]:
    return [line for line in lines if text in line]


@pytest.mark.parametrize("cols", [60, 100])
def test_an_mcp_result_is_summed_up_in_one_line_that_fits(term, cols):
    demo = server_table("demo", [str(SERVERS / "demo.py")], 'approval = "never"')
    t, screen = term([{"tool_calls": [call("demo__shout", text="hello there")]},
                      {"tool_calls": [call("demo__big", size=5000)]}, {"text": "all done"}], cols, demo)
    t.say("use the demo server")
    t.expect("all done")
    t.expect(PROMPT)
    lines = screen.lines()
    [shout] = lines_with(lines, "demo__shout")
    assert shout.startswith("● demo__shout(text=\"hello there\") ⎿ HELLO THERE")
    [big] = lines_with(lines, "demo__big")  # one line, cut to the width, saying how much there was
    assert big.startswith("  demo__big(size=5000) ⎿ xxx") and big.endswith("… (5,000 chars)")
    assert len(big) <= cols
    assert not any(line.strip("x… ") == "" and "x" in line for line in lines)  # nothing spilled onto a next line
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_a_read_only_mcp_call_is_asked_about_as_a_call_to_run_not_a_change_to_apply(term, cols):
    demo = server_table("demo", [str(SERVERS / "demo.py")])
    t, screen = term([{"tool_calls": [call("demo__add", a=2, b=3)]}, {"text": "the sum is 5"}], cols, demo)
    t.say("add 2 and 3")
    t.expect(r"Run it\?")
    asked = " ".join(screen.text().replace("│", " ").split())  # the panel's text, its lines joined
    assert "Apply?" not in asked
    assert "read-only (its own claim, not checked)" in asked  # the server's hint is shown, never taken as a grant
    assert "yes to this and every later call and change this session" in asked
    t.child.send("y")
    t.expect("the sum is 5")
    t.expect(PROMPT)
    [result] = lines_with(screen.lines(), "✓ demo__add")
    assert result.strip() == "✓ demo__add 5"
    assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 100])
def test_a_broken_server_is_said_at_start_up_once_without_holding_up_the_prompt(term, cols):
    broken = server_table("broken", ["-c", "import sys, time; time.sleep(2); sys.exit(3)"])
    t, screen = term([{"text": "hello back"}], cols, broken)  # the prompt came first: nothing waited for the server
    t.expect("mcp server 'broken' is not available")  # with nothing typed: said at start-up, above the prompt
    t.expect(PROMPT)
    t.say("hello")
    t.expect("hello back")
    t.expect(PROMPT)
    text = " ".join(screen.text().split())
    assert text.count("mcp server 'broken' is not available") == 1  # said once: the first turn does not repeat it
    assert text.index("is not available") < text.index("> hello")
    assert t.quit() == 0

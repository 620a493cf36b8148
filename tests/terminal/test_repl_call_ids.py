"""A server that numbers tool calls per reply (`call_0` every time, as some do, and as `call_{index}` stands in for a
missing id): in a pseudo-terminal (a pyte screen at 60 and 80 columns) every applied change still draws its diff,
and an approval is credited to the call it approved, not to a later call that reuses the id."""

from __future__ import annotations

import re

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = [pytest.mark.slow]


def reply(name: str, **arguments: str) -> dict:
    return {"tool_calls": [{"name": name, "id": "call_0", "arguments": arguments}]}


@pytest.mark.parametrize("cols", [60, 80])
def test_every_change_draws_its_diff_when_the_server_repeats_call_ids(tmp_path, cols):
    replies = [reply("create_file", path="one.txt", content="first file\n"),
               reply("create_file", path="two.txt", content="second file\n"),
               {"text": "made both"}]
    with Terms(tmp_path) as terms:
        t, screen = terms.start(replies, cols, env={"CLI_AGENT_APPROVAL": "all"})
        t.say("make two files")
        t.expect("made both")
        t.expect(PROMPT)
        text = screen.text()
        assert re.search(r"│ +1 first file", text) and re.search(r"│ +1 second file", text), text  # each panel
        assert (t.ws / "two.txt").read_text() == "second file\n"
        assert t.quit() == 0


@pytest.mark.parametrize("cols", [60, 80])
def test_an_approval_is_credited_to_its_own_call_only(tmp_path, cols):
    replies = [reply("create_file", path="one.txt", content="first file\n"),
               reply("create_file", path="two.txt", content="second file\n"),
               reply("read_file", path="one.txt"),
               {"text": "all done"}]
    with Terms(tmp_path) as terms:
        t, screen = terms.start(replies, cols)
        t.say("make files")
        t.expect(r"Apply\?")
        t.child.send("t")  # yes to every create_file call this session
        t.expect("all done")
        t.expect(PROMPT)
        lines = [" ".join(line.split()) for line in screen.lines()]
        second = next(i for i, line in enumerate(lines) if "│ 1 second file" in line)  # drawn, approved by the rule
        assert "approved for this session" in " ".join(lines[second:]), lines[second:]  # wrapped between words or not
        read = next(i for i, line in enumerate(lines) if "Read(one.txt)" in line)
        assert "approved" not in " ".join(lines[read:read + 2]), lines[read:read + 2]
        assert t.quit() == 0

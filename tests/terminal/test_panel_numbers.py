"""A change's panel says which of the reply's calls it is among those drawn as panels: a plan update before it (drawn
as its checklist) is not counted, at 80 and 60 columns."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT, create

pytestmark = pytest.mark.slow

PLAN = {"name": "update_plan", "arguments": {"steps": [{"step": "Make the files", "status": "in_progress"}]}}


@pytest.mark.parametrize("cols", [80, 60])
def test_a_plan_update_is_not_counted_in_the_panels_numbers(tmp_path, cols):
    with Terms(tmp_path) as terms:
        t, screen = terms.start([{"tool_calls": [PLAN, create("a.txt")]},
                                 {"tool_calls": [PLAN, create("b.txt"), create("c.txt")]}, {"text": "made"}], cols)
        t.say("make the files")
        for _ in range(3):
            t.expect(r"Apply\?")
            t.child.send("y")
        t.expect("made")
        t.expect(PROMPT)
        titles = [line for line in screen.lines() if line.startswith("╭─ create_file")]
        assert len(titles) == 3, screen.text()[-2000:]
        assert "/" not in titles[0].split("a.txt")[1].split("─")[0], titles[0]  # the reply's only panel: no number
        assert "(1/2)" in titles[1] and "(2/2)" in titles[2], titles
        assert t.quit() == 0

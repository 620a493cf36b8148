"""The plan and /expand in a pseudo-terminal at 80 and 60 columns: each plan update is printed as its checklist in
the scrollback, and /expand shows the last turn in order (thinking, plan, each call with what it gave the model:
a file's lines, a page's text), bounded, not raw JSON."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT
from webkit import web_server

pytestmark = pytest.mark.slow

STEPS = [{"step": "Read stats.py", "status": "in_progress"}, {"step": "Read the release notes", "status": "pending"}]


@pytest.mark.parametrize("cols", [80, 60])
def test_the_plan_stays_in_the_scrollback_and_expand_shows_the_turn_in_order(tmp_path, cols):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "stats.py").write_text("def mean(xs):\n    return sum(xs) / len(xs)\n")
    with web_server() as (base, _hits), Terms(tmp_path) as terms:
        replies = [
            {"thinking": "First the plan, then read the module.",
             "tool_calls": [{"name": "update_plan", "arguments": {"steps": STEPS}},
                            {"name": "read_file", "arguments": {"path": "stats.py"}}]},
            {"tool_calls": [{"name": "web_fetch", "arguments": {"url": f"{base}/page"}}]},
            {"thinking": "Both read; nothing to change.", "text": "Nothing to change."},
        ]
        t, screen = terms.start(replies, cols, config="[web]\nallow_private = true\n", args=("--yes",))
        t.say("look at stats.py and the notes")
        t.expect("Nothing to change")
        t.expect(PROMPT)
        lines = screen.lines()
        plan = next(i for i, line in enumerate(lines) if line.startswith("☰ Plan"))
        assert lines[plan + 1].strip() == "▸ Read stats.py" and lines[plan + 2].strip() == "○ Read the release notes"
        t.say("/expand")
        assert screen.wait_until(t.child, lambda: "Both read" in screen.text().rpartition("> /expand")[1:][-1]
                                 and "> /expand" in screen.text()), screen.text()[-2000:]
        lines = screen.lines()
        shown = lines[max(i for i, line in enumerate(lines) if line.startswith("> /expand")):]
        text = "\n".join(shown)
        assert '"steps"' not in text and "no folded calls" not in text, text
        order = [next(i for i, line in enumerate(shown) if want in line) for want in (
            "First the plan", "☰ Plan", "│ def mean(xs):", "Version 2.0", "Both read")]
        assert order == sorted(order), text
        assert t.quit() == 0

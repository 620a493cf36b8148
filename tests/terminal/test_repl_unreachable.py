"""A "fix" that only puts a `return` above the buggy line, leaving it as dead code: in a pseudo-terminal (a pyte screen
at 60 and 80 columns) the change's panel names the lines it made unreachable, and the model is told with the
edit's result, whether the change is asked for or applied unasked."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT

pytestmark = [pytest.mark.slow]

CALC = "def mean(values):\n    total = sum(values)\n    return total / (len(values) + 1)\n"
FIX = {"tool_calls": [{"name": "edit_file", "arguments": {
    "path": "calc.py", "old": "    return total / (len(values) + 1)",
    "new": "    return total / len(values)\n    return total / (len(values) + 1)"}}]}


def edit_result(traces: list[dict]) -> dict:
    return next(e for e in traces if e.get("type") == "tool_result" and e.get("tool") == "edit_file")


@pytest.mark.parametrize("cols", [60, 80])
def test_code_made_unreachable_is_named_in_the_panel_and_to_the_model(tmp_path, cols):
    with Terms(tmp_path) as terms:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "calc.py").write_text(CALC)
        t, screen = terms.start([FIX, {"text": "fixed mean"}], cols,
                                env={"CLI_AGENT_APPROVAL": "all", "CLI_AGENT_VERIFY": "false"})
        t.say("mean([1, 2, 3]) should be 2: fix mean in calc.py")
        t.expect("fixed mean")
        t.expect(PROMPT)
        text = " ".join(screen.text().split())
        panel = text[text.index("edit_file calc.py"):text.index("fixed mean")]
        assert "line 4 of mean() can never run (after the `return` on line 3)" in " ".join(
            panel.replace("│", " ").split()), panel
        assert t.quit() == 0
        warnings = edit_result(t.traces())["envelope"]["warnings"]
        assert any("line 4 of mean() can never run" in w for w in warnings), warnings


@pytest.mark.parametrize("cols", [60, 80])
def test_the_approval_panel_names_it_before_the_change_is_applied(tmp_path, cols):
    with Terms(tmp_path) as terms:
        (tmp_path / "ws").mkdir()
        (tmp_path / "ws" / "calc.py").write_text(CALC)
        t, screen = terms.start([FIX, {"text": "fixed mean"}], cols, env={"CLI_AGENT_VERIFY": "false"})
        t.say("fix mean in calc.py")
        t.expect(r"Apply\?")
        shown = " ".join(screen.text().replace("│", " ").split())
        assert "line 4 of mean() can never run" in shown, shown
        t.child.send("n")
        t.expect(PROMPT)
        assert (t.ws / "calc.py").read_text() == CALC
        assert t.quit() == 0

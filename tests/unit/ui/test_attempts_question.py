"""The question about the candidate that passed the tests (`--attempts`), drawn on recording consoles at 60 and 80
columns: titled by the candidate, each file named once, and no `f` (the model's work is over) nor a grant."""

from __future__ import annotations

import pytest
from rich.console import Console

from cli_agent.contracts.change import Change
from cli_agent.contracts.events import ApprovalAsked, Decision
from cli_agent.contracts.messages import ToolCall
from cli_agent.ui.view.approve import TerminalApprover


@pytest.mark.parametrize("cols", [60, 80])
def test_the_candidate_question_names_the_candidate_and_offers_only_yes_and_no(cols):
    change = Change(tool="attempts", kind="edit", path="calc.py", before=b"x = 1\n", after=b"x = 2\n",
                    summary="edit calc.py (from the candidate that passed the tests)")
    call = ToolCall("attempt-1", "attempts", {"candidate": 2, "of": 3, "tests": "2 passed"}, "{}")
    asked = ApprovalAsked(call=call, change=None, index=1, total=1, changes=(change,),
                          about="candidate 2 of 3 passes the tests (2 passed); these changes replace this run's")
    console = Console(record=True, width=cols, color_system=None)
    decision = TerminalApprover(console, read=lambda prompt: "f")(asked)
    shown = console.export_text()
    said = " ".join(shown.split())
    assert "candidate 2 of 3: passes the tests" in said
    assert "─ attempts" not in shown and "edit calc.py" not in said  # the path once, heading its diff
    assert "tell the model" not in said and "every later" not in said  # no f, a or t after the run
    assert decision is Decision.NO

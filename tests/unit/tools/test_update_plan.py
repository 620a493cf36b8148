"""update_plan: the checklist the model keeps, checked against its schema and its one rule (one step at a time)."""

from __future__ import annotations

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools.context import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.handlers.run_tools import update_plan
from cli_agent.tools.registry import Registry


def test_the_plan_comes_back_as_it_now_stands(tmp_path):
    data = update_plan(ToolContext(Workspace(tmp_path)), [{"step": "Read  the\nparser", "status": "completed"},
                                                          {"step": "Fix it", "status": "in_progress"},
                                                          {"step": "Test it", "status": "pending"}], "found it")
    assert data == {"plan": [{"step": "Read the parser", "status": "completed"},
                             {"step": "Fix it", "status": "in_progress"}, {"step": "Test it", "status": "pending"}],
                    "summary": "1 of 3 steps completed", "explanation": "found it"}


def test_two_steps_in_progress_are_refused(tmp_path):
    with pytest.raises(ToolError, match="2 steps are in_progress"):
        update_plan(ToolContext(Workspace(tmp_path)), [{"step": "a", "status": "in_progress"},
                                                       {"step": "b", "status": "in_progress"}])


@pytest.mark.parametrize("steps", [[], [{"step": "a", "status": "done"}], [{"step": "a"}], [{"step": "", "status":
                                   "pending"}], "a, b", [{"step": "a", "status": "pending", "extra": 1}]])
def test_what_the_schema_refuses_is_said_to_the_model(tmp_path, steps):
    dispatcher = Dispatcher(Registry.builtin(), ToolContext(Workspace(tmp_path)))
    envelope = dispatcher.run(ToolCall("c1", "update_plan", {"steps": steps}, ""))
    assert not envelope.ok and envelope.errors

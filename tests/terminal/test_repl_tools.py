"""The plan, a hook and a sub-task as a person sees them in the real REPL (a pseudo-terminal, the scripted
provider): the plan's summary at the turn's end, a hook's line in the transcript, the sub-task folded into one
line and shown whole by /expand."""

from __future__ import annotations

import pytest
from termkit import PROMPT

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow  # a real REPL in a pty: seconds a test

STEPS = [{"step": "Read VERSION", "status": "completed"}, {"step": "Answer", "status": "in_progress"}]


def test_the_plan_a_sub_task_and_expand(term):
    t = term([{"tool_calls": [{"name": "update_plan", "arguments": {"steps": STEPS}}]},
              {"tool_calls": [{"name": "task", "arguments": {"description": "Read the version",
                                                             "prompt": "What does VERSION hold?"}}]},
              {"tool_calls": [{"name": "read_file", "arguments": {"path": "VERSION"}}]},
              {"text": "VERSION holds 3.1.4"},
              {"text": "It is 3.1.4."}])
    (t.ws / "VERSION").write_text("3.1.4\n")
    t.say("which version?")
    seen = t.expect(r"☰ plan: 1/2 done · now: Answer")
    assert "Task(Read the version)" in seen and "2 steps (/expand)" in seen and "It is 3.1.4." in seen
    t.expect(PROMPT)
    t.say("/expand")
    t.expect(r"Read the version")  # the turn in order: the task's own call
    t.expect(r"VERSION holds 3\.1\.4")  # with what it gave the model
    t.expect(PROMPT)
    assert t.quit() == 0

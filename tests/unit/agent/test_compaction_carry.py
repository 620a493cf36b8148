"""What a compaction carries over word for word (`agent.carried_over`): every prompt of the session (the first and
the last ones whole, the others bounded, more than enough of them counted), the plan, the changed files with their
undo turns, the last verdict with its failing tests, the facts."""

from __future__ import annotations

from cli_agent.agent import carried_over
from cli_agent.contracts import PlanUpdated, RunStarted, Verification


def started(n, prompt, command=""):
    return RunStarted(run_id=f"r{n}", prompt=prompt, model="m", protocol="native", workspace="/w", command=command)


def test_every_prompt_before_is_in_what_is_carried_after():
    prompts = ["fix the parser " + "x" * 20_000, "now the lexer", "and the docs", "then the tests", "ship it"]
    kept = carried_over([started(i, p) for i, p in enumerate(prompts)])
    assert f"1. {prompts[0][:8000]}" in kept and "12,015 more characters" in kept  # the first: the task, bounded
    for n, prompt in enumerate(prompts[1:], 2):
        assert f"{n}. {prompt}" in kept


def test_older_prompts_are_bounded_and_counted():
    prompts = [f"prompt {i} " + "y" * 400 for i in range(40)]
    kept = carried_over([started(i, p) for i, p in enumerate(prompts)])
    assert f"1. {prompts[0]}" in kept and f"40. {prompts[39]}" in kept  # whole
    assert f"20. {prompts[19][:300]} [... {len(prompts[19]) - 300} more characters]" in kept
    assert "(prompts 2 to 7: 6 older prompts left out)" in kept and "\n2. " not in kept


def test_the_plan_files_verdict_and_facts():
    events = [started(1, "the prompt", command="/refactor a.py"),
              PlanUpdated(call_id="c", steps=({"step": "split", "status": "completed"},
                                              {"step": "test", "status": "in_progress"})),
              Verification(command="pytest -q", round=1, phase="failed",
                           summary="FAILED tests/test_a.py::test_one - assert 1 == 2\n1 failed, 3 passed")]
    kept = carried_over(events, [(4, ["a.py", "b.py"])], ["Tests use pytest."])
    assert "1. /refactor a.py" in kept  # what the user typed
    assert "- [completed] split\n- [in_progress] test" in kept
    assert "- turn 4: a.py, b.py" in kept
    assert "The last verification: " in kept and "Failing: tests/test_a.py::test_one" in kept
    assert "- Tests use pytest." in kept

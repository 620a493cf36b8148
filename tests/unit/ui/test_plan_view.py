"""The plan on a terminal: in the live region above the spinner while the turn runs (redrawn in place), one line
when the turn ends; on a console that is not a terminal, each plan in the transcript."""

from __future__ import annotations

from rich.console import Console

from cli_agent.contracts.events import ModelRequest, PlanUpdated, RunFinished, RunStarted, StopReason
from cli_agent.ui.view.plan_view import plan_text
from cli_agent.ui.view.render import Renderer

PLAN = PlanUpdated(call_id="c1", steps=({"step": "Read the parser", "status": "completed"},
                                        {"step": "Add the [red]strict[/red] flag", "status": "in_progress"},
                                        {"step": "Run the tests", "status": "pending"}))


def test_the_plan_is_drawn_with_a_mark_per_status_and_markup_stays_text():
    console = Console(record=True, width=80, color_system=None)
    console.print(plan_text(PLAN))
    assert console.export_text().splitlines() == ["☰ Plan  1/3", "  ✓ Read the parser",
                                                  "  ▸ Add the [red]strict[/red] flag", "  ○ Run the tests"]


def test_a_long_plan_keeps_the_step_in_progress_in_sight():
    steps = tuple({"step": f"step {n}", "status": "completed" if n < 25 else "in_progress" if n == 25 else "pending"}
                  for n in range(40))
    text = plan_text(PlanUpdated(call_id="c", steps=steps)).plain
    assert "▸ step 25" in text and "step 0\n" not in text and "… 28 more" in text


def test_each_plan_is_printed_the_live_region_holds_it_and_the_turn_ends_with_its_summary():
    console = Console(record=True, width=80, color_system=None, force_terminal=True)
    renderer = Renderer(console)
    renderer(RunStarted("r1", "task", "m", "native", "/ws"))
    renderer(ModelRequest(step=1, fingerprint="f", messages=1))
    renderer(PLAN)
    assert "▸ Add the" in console.export_text(clear=False)  # in the scrollback, not only in the live region
    renderer(ModelRequest(step=2, fingerprint="f", messages=3))  # a new live region keeps the plan
    assert renderer._working is not None and renderer._working.plan is not None
    renderer(RunFinished(stop_reason=StopReason.DONE, message="done", answer="ok", steps=2))
    renderer.close()
    assert "☰ plan: 1/3 done · now: Add the [red]strict[/red] flag" in console.export_text()


def test_without_a_terminal_each_plan_is_printed():
    console = Console(record=True, width=80, color_system=None)
    renderer = Renderer(console)
    renderer(RunStarted("r1", "task", "m", "native", "/ws"))
    renderer(PLAN)
    renderer(RunFinished(stop_reason=StopReason.DONE, message="done", answer="ok", steps=1))
    text = console.export_text()
    assert "☰ Plan  1/3" in text and "☰ plan: 1/3 done" in text


def test_a_sub_task_is_one_line_while_it_works_and_its_calls_fold_for_expand():
    from cli_agent.contracts.envelope import Envelope
    from cli_agent.contracts.events import SubagentEvent, ToolCallsProposed, ToolResult
    from cli_agent.contracts.messages import ToolCall

    console = Console(record=True, width=80, color_system=None, force_terminal=True)
    renderer = Renderer(console)
    task = ToolCall("t1", "task", {"description": "Find the config", "prompt": "..."}, "")
    read = ToolCall("r1", "read_file", {"path": "settings.py"}, "")
    renderer(RunStarted("r1", "task", "m", "native", "/ws"))
    renderer(ToolCallsProposed(calls=(task,)))
    renderer(SubagentEvent(call_id="t1", description="Find the config",
                           event=ToolCallsProposed(calls=(read,)).to_dict()))
    assert renderer._working is not None and renderer._working.task == "⟳ task: Find the config · read_file"
    inner = ToolResult(call_id="r1", tool="read_file", envelope=Envelope.success(
        {"path": "settings.py", "total_lines": 1, "start_line": 1, "end_line": 1, "content": "X = 1"}))
    renderer(SubagentEvent(call_id="t1", description="Find the config", event=inner.to_dict()))
    renderer(ToolResult(call_id="t1", tool="task", envelope=Envelope.success(
        {"description": "Find the config", "answer": "settings.py", "steps": 2, "stop_reason": "done"})))
    renderer.close()
    text = console.export_text()
    assert "Task(Find the config)" in text and "2 steps (/expand)" in text and "settings.py" not in text
    assert [(c.name if c else None, r.tool) for c, r in renderer.folded] == [("read_file", "read_file"),
                                                                              ("task", "task")]


def test_a_hook_is_one_line_of_the_transcript():
    from cli_agent.contracts.events import HookRan

    console = Console(record=True, width=80, color_system=None)
    renderer = Renderer(console)
    renderer(HookRan(event="after_tool", command="ruff format .", exit_code=0, stdout="1 file reformatted\n",
                     tool="edit_file"))
    renderer(HookRan(event="before_tool", command="guard.sh", exit_code=2, stderr="no [red]pushing[/red]\n",
                     blocked=True))
    renderer(HookRan(event="stop", command="sleep 600", exit_code=None, timed_out=True))
    assert console.export_text().splitlines() == [
        "⚑ after_tool hook ruff format .: exit 0 · 1 file reformatted",
        "⚑ before_tool hook guard.sh: blocked · no [red]pushing[/red]",
        "⚑ stop hook sleep 600: timed out (killed)"]

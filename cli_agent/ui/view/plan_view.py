"""The model's checklist (update_plan) on a terminal: drawn in the live region above the spinner while the turn
runs, redrawn in place at each update, and summed up in one line when the turn ends.

    ☰ Plan  2/4
      ✓ Read the parser
      ✓ Add the strict flag
      ▸ Update the tests
      ○ Run the tests
"""

from __future__ import annotations

from rich.text import Text

from cli_agent.contracts.escape import escape_for_terminal as esc
from cli_agent.contracts.events import PlanUpdated

__all__ = ["plan_summary", "plan_text"]

_MARKS = {"completed": ("✓", "green"), "in_progress": ("▸", "bold cyan"), "pending": ("○", "dim")}
_MOST = 12  # steps drawn; a longer plan keeps the one in progress in sight


def plan_text(plan: PlanUpdated, width: int = 100) -> Text:
    steps = list(plan.steps)
    done = sum(1 for s in steps if s.get("status") == "completed")
    text = Text.assemble(("☰ Plan", "bold"), (f"  {done}/{len(steps)}", "dim"))
    now = next((i for i, s in enumerate(steps) if s.get("status") == "in_progress"), done)
    start = max(0, min(now - _MOST // 2, len(steps) - _MOST))
    for step in steps[start:start + _MOST]:
        mark, style = _MARKS.get(step.get("status", ""), ("?", "dim"))
        line = esc(str(step.get("step", "")))[: max(10, width - 6)]
        text.append(f"\n  {mark} ", style=style)
        text.append(line, style="dim" if step.get("status") == "completed" else "")
    if len(steps) > _MOST:
        text.append(f"\n  … {len(steps) - _MOST} more", style="dim")
    return text


def plan_summary(plan: PlanUpdated) -> Text:
    """The turn's last plan in one line."""
    return Text("☰ " + esc(plan.summary), style="dim")

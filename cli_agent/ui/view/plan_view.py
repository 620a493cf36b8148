"""The model's checklist (update_plan) and the hooks that ran, on a terminal. Each update of the checklist is
printed in the transcript, the latest is drawn above the spinner while the model works, and it is summed up in one
line when the turn ends; a hook that ran is one line of the transcript.

    ☰ Plan  2/4
      ✓ Read the parser
      ✓ Add the strict flag
      ▸ Update the tests
      ○ Run the tests
"""

from __future__ import annotations

from rich.text import Text

from cli_agent.contracts import HookRan, PlanUpdated
from cli_agent.contracts import escape_for_terminal as esc

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


def hook_line(event: HookRan, width: int = 100) -> Text:
    """A hook that ran, in the transcript: `⚑ after_tool hook `ruff format .`: exit 0 · 1 file reformatted`."""
    how = "timed out (killed)" if event.timed_out else "blocked" if event.blocked else f"exit {event.exit_code}"
    said = " ".join((event.stderr if event.blocked or event.exit_code else event.stdout or event.stderr).split())
    style = "yellow" if event.blocked or event.timed_out or event.exit_code else "dim"
    text = Text(f"⚑ {event.event} hook ", style=style)
    most = max(12, min(_COMMAND_MOST, width - len(text.plain) - len(how) - 3))  # the line's head fits the width
    text.append(_cut(esc(event.command), most), style=style + " bold")
    text.append(f": {how}", style=style)
    room = width - len(text.plain) - 4
    if said and room >= 20:  # what it printed, in the line's room, cut with "…" (/expand shows it whole)
        text.append(" · " + _cut(esc(said), room), style=style)
    elif said:  # no room left: on a line of its own, under the hook's
        text.append("\n    " + _cut(esc(said), max(width - 5, 20)), style=style)
    return text


_COMMAND_MOST = 40  # characters of a hook's command in its line


def _cut(text: str, most: int) -> str:
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"

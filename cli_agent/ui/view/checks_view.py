"""The lines of a test run (`Verification`): `⧗ verifying: …` and its verdict after a change, and, for the check
a run or an `--attempts` candidate makes before it changes anything (to show the model what fails), what that is:
`⧗ checking what fails before any change: …`, its verdict dim (failing there is what the change is to fix)."""

from __future__ import annotations

from rich.console import RenderableType
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.contracts import events as ev
from cli_agent.ui.view.command_panel import hanging

_STYLE = {"passed": "green", "failed": "red", "running": "dim", "unverified": "yellow"}


class Checks:
    """Follows the events to tell a check before any change (one that comes before the model is first asked, in a
    run or in a candidate starting from the files as they were) from the verification of a change."""

    def __init__(self) -> None:
        self.asked = False  # the model was asked, or a change made, in this run (or candidate)

    def see(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted) or (isinstance(event, ev.Warning) and event.code == "attempt"
                                                and "starting from the files" in event.message):
            self.asked = False
        elif isinstance(event, ev.ModelRequest) or (isinstance(event, ev.ToolResult)
                                                    and (event.change is not None or bool(event.changes))):
            self.asked = True  # a change may come now: a test run checks it

    def line(self, event: ev.Verification) -> RenderableType:
        if self.asked:
            return Text(esc(event.line), style=_STYLE.get(event.phase, "dim"))
        if event.phase == "running":
            return hanging(Text("⧗ ", style="dim"), Text(esc(f"checking what fails before any change: {event.command}"),
                                                        style="dim"))
        verdict = {"passed": "nothing fails yet", "none": "no test ran", "unverified": "not checked"}.get(event.phase)
        said = ", ".join(x for x in (esc(event.summary), verdict) if x) or esc(event.phase)
        return hanging(Text("  ", style="dim"), Text(f"before any change: {said}", style="dim"))

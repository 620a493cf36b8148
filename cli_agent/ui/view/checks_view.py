"""The lines of a test run (`Verification`): `⧗ verifying: …` and its verdict after a change, and, for the check
a run or an `--attempts` candidate makes before it changes anything (to show the model what fails), what that is:
`⧗ checking what fails before any change: …`, its verdict dim (failing there is what the change is to fix).

`ChangeTally` keeps what a run changed, for the one line of the harness's own that ends a run whose answer does not
name what it changed: `✎ changed stats.py (+1 -1) · tests pass`."""

from __future__ import annotations

import os

from rich.console import RenderableType
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.contracts import events as ev
from cli_agent.ui.view.command_panel import hanging

__all__ = ["ChangeTally"]

_STYLE = {"passed": "green", "failed": "red", "running": "dim", "unverified": "yellow"}
_NAMED = 3  # files named in the line; the rest are counted


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


class ChangeTally:
    """The files a run changed and the lines it added and removed in each (what it wrote, as its results say)."""

    def __init__(self) -> None:
        self.files: dict[str, list[int]] = {}

    def see(self, event: ev.Event) -> None:
        if isinstance(event, ev.RunStarted):
            self.files = {}
        elif isinstance(event, ev.ToolResult) and event.envelope.ok:
            for change in (event.change, *event.changes):
                if change is not None:
                    added, removed = change.stats()
                    counts = self.files.setdefault(change.path, [0, 0])
                    counts[0] += added
                    counts[1] += removed

    def line(self, finished: ev.RunFinished) -> str | None:
        """`✎ changed PATH (+A -R), … · VERDICT` when the run changed files and its answer names none of them (by
        path or file name); else None: the answer says it."""
        if not self.files or finished.stop_reason is not ev.StopReason.DONE:
            return None
        answer = finished.answer.lower()
        if any(path.lower() in answer or os.path.basename(path).lower() in answer for path in self.files):
            return None
        named = [f"{path} (+{a} -{r})" for path, (a, r) in list(self.files.items())[:_NAMED]]
        more = f" and {len(self.files) - _NAMED} more" if len(self.files) > _NAMED else ""
        verdict = {True: "tests pass", False: "tests fail"}.get(finished.verified, "not verified")  # type: ignore[arg-type]
        return f"✎ changed {', '.join(named)}{more} · {verdict}"

"""The REPL's live region while the model works or a command runs: the tail of the reply or of the output, a
spinner with the elapsed time and a hint, and the lines typed meanwhile."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.spinner import Spinner
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.command_panel import LIVE_LINES, output_block

_LIVE_KEEP = 64 * 1024  # characters of a running command's output kept for its live tail


class Working:
    """The live region while the model works: the tail of the streamed reply (or, while a command runs, of its
    output), then a spinner and the time, and what the user typed meanwhile (`typed()`: the lines queued to send
    next)."""

    def __init__(self, clock: Callable[[], float], typed: Callable[[], list[str]], hint: Callable[[], str],
                 command: bool = False) -> None:
        self.hint = hint
        self.clock = clock
        self.typed = typed
        self.command = command
        self.started = clock()
        self.text = ""
        self.thinking = ""  # a reasoning model's thinking, shown dimmed until the answer starts
        self.plan: Any = None  # the model's checklist, drawn above the spinner (ui.view.plan_view)
        self.task = ""  # a sub-task at work: one line (ui.view.render)
        self.spinner = Spinner("dots", style="cyan")

    def add(self, text: str) -> None:
        self.text = (self.text + text)[-_LIVE_KEEP:]

    def __rich_console__(self, console: Console, options: Any) -> Any:
        queued = self.typed()
        if self.plan is not None:
            yield self.plan
        if self.task:
            yield Text(esc(self.task), style="cyan")
        used = (len(self.plan.plain.splitlines()) if self.plan is not None else 0) + bool(self.task)
        room = max(1, (options.height or console.height) - 2 - len(queued) - used)
        if self.command:
            block = output_block(self.text, min(room, LIVE_LINES), more="")
            if block is not None:
                yield block
            label = "running"
        else:
            if self.text:
                yield Text(esc("\n".join(self.text.splitlines()[-room:])))
            elif self.thinking:
                yield Text(esc("\n".join(self.thinking.splitlines()[-room:])), style="dim italic")
            label = "writing" if self.text else "thinking"
        frame = self.spinner.render(console.get_time())
        yield Text.assemble(frame if isinstance(frame, Text) else "", f" {label} {self.clock() - self.started:.1f}s",
                            ("  " + self.hint(), "dim"))
        for n, line in enumerate(queued):
            last = n == len(queued) - 1
            yield Text.assemble(("> ", "bold cyan"), esc(line), ("  (queued: sent when this turn ends)" if last
                                                                 else "", "dim"))


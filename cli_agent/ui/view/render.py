"""The REPL's picture of a run: an event sink that draws with Rich.

The reply streams into a live region (its tail, and a spinner with the elapsed time) and is printed as Markdown
once complete. Each tool call is a panel (`call_panel`): its arguments, or for a file change the diff, the new
content (highlighted, folded when long) or what a delete removes; each result is one ✓/✗ line. Every string that
came from the model or a file goes through `escape_for_terminal` and into a `Text` (never into markup), so escape
sequences, carriage returns and bidi marks show as text and `[red]` stays `[red]`.
"""

from __future__ import annotations

import contextlib
import json
import signal
import time
from collections.abc import Callable, Iterator
from typing import Any

from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from cli_agent.contracts import Change, ToolCall
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.contracts import events as ev
from cli_agent.ui.view.change_view import arguments_text, call_title, change_body
from cli_agent.ui.view.checks_view import ChangeTally, Checks
from cli_agent.ui.view.command_panel import changes_panel, command_line, command_result, hanging, output_block
from cli_agent.ui.view.plan_view import hook_line, plan_summary, plan_text
from cli_agent.ui.view.transcript import changes_nothing, compact_line, result_line
from cli_agent.ui.view.working import Working

__all__ = ["Renderer", "call_panel", "hung"]

def markdown(text: str) -> RenderableType:
    """Model text as Markdown: escaped first; links shown as text (url), never as hidden hyperlinks."""
    from rich.markdown import Markdown  # deferred: Rich's Markdown, when an answer is first drawn

    return Markdown(esc(text), hyperlinks=False)


def call_panel(call: ToolCall, change: Change | None = None, *, index: int = 0, total: int = 0,
               about: str = "", changes: tuple[Change, ...] = ()) -> Panel:
    """A tool call as a panel: for a file change what it changes, for several (a command's change set, a rename)
    each file's, otherwise its arguments (and `about`, what the tool's spec says to weigh before approving it)."""
    body: RenderableType
    if changes:
        return changes_panel(call, changes, index=index, total=total)
    if change is None and about:
        body = Group(Text(esc(about), style="dim"), arguments_text(call))
        return Panel(body, title=call_title(call, index, total), title_align="left", border_style="blue")
    if change is not None:
        extra = {k: v for k, v in (call.arguments or {}).items()
                 if k not in ("path", "content", "old", "new") and v not in (False, None, "", [], {})}  # set ones
        head = Text(esc(change.summary or change.kind), style="dim")
        for key, value in extra.items():  # `replace_all`, `start_line`: said as words, not as JSON
            shown = "yes" if value is True else value if isinstance(value, str) else json.dumps(value,
                                                                                             ensure_ascii=False)
            head.append(f"  · {esc(key.replace('_', ' '))}: {esc(str(shown))}", style="dim")
        body = Group(head, *(Text("! " + esc(w), style="bold yellow") for w in change.warnings), change_body(change))
        style = "red" if change.kind == "delete" else "yellow"
    else:
        body = arguments_text(call)
        style = "blue"
    return Panel(body, title=call_title(call, index, total), title_align="left", border_style=style)


def hung(line: Text) -> RenderableType:
    """A `  ✓ …` line whose continuation lines wrap under its first word, not at column 0."""
    head, _, _ = line.plain.partition("\n")
    if not head.startswith(("  ✓ ", "  ✗ ")):
        return line
    return hanging(line[:4], line[4:])


def _tokens(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 10_000 else f"{n:,}"


def finish_line(finished: ev.RunFinished, seconds: float) -> Text:
    """Why the turn ended: a dim summary when done, otherwise what happened and what to do next."""
    reason = finished.stop_reason
    if reason is ev.StopReason.DONE:  # seconds NaN: not known (a resumed older trace); no steps: the user's command
        bits = [*([f"{finished.steps} step{'s' if finished.steps != 1 else ''}"] if finished.steps else []),
                *(["tests pass"] if finished.verified else []), *([f"{seconds:.1f}s"] if seconds == seconds else [])]
        if finished.usage.total_tokens:
            bits.append(f"{_tokens(finished.usage.total_tokens)} tokens")
        if finished.usage.cost_usd:
            bits.append(f"${finished.usage.cost_usd:.4f}")
        return Text("· " + " · ".join(bits), style="dim")
    if reason in (ev.StopReason.INTERRUPTED, ev.StopReason.CANCELLED):
        return Text("interrupted: nothing was half-written", style="yellow")
    if reason is ev.StopReason.DENIED:
        return Text.assemble(("stopped: ", "yellow bold"), (esc(finished.message), "yellow"),
                             (". Nothing else ran; say what to do instead.", "yellow"))
    return Text.assemble((f"✗ {reason.value}: ", "bold red"), (esc(finished.message), "red"))


_INTERRUPTED = (ev.StopReason.CANCELLED, ev.StopReason.INTERRUPTED)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """A Ctrl-C (SIGINT) waits until the live region has started or stopped whole: one landing inside Rich's Live
    would leave it half made (on the main thread; elsewhere nothing is held)."""
    try:
        held = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except (AttributeError, OSError, ValueError):
        yield
        return
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)


class Renderer:
    """An event sink drawing a run on `console`; live regions only when the console is a terminal.

    Calls of the tools `compact(name)` says are read-only take one line each, consecutive ones grouped under one
    bullet (`folded` keeps them for `/expand`); changes and anything asked about get their full panel."""

    def __init__(self, console: Console, *, clock: Callable[[], float] = time.monotonic,
                 compact: Callable[[str], bool] | None = None, typed: Callable[[], list[str]] = list,
                 one_shot: bool = False, mode: Callable[[], str] | None = None) -> None:
        """`one_shot`: for `-p` on a terminal: Esc is not read, and a run that did not end well gets no line (the
        last line on stderr says why). `mode`: the approval mode, shown by the spinner (Shift+Tab changes it)."""
        self.console = console
        self.one_shot = one_shot
        self.clock = clock
        self.compact = compact or changes_nothing
        self.typed = typed
        self.mode = mode
        self.live = console.is_terminal
        self.folded: list[tuple[ToolCall | None, ev.ToolResult]] = []
        self._checks = Checks()  # a test run before any change is drawn as such
        self._tally = ChangeTally()  # what the run changed, said at its end when its answer does not
        self._live: Any = None
        self._working: Working | None = None
        self._protocol = ""
        self._started = clock()
        self._calls: dict[str, ToolCall] = {}
        self._shown: set[str] = set()
        self._approved_by: dict[str, str] = {}
        self._asked_changes: set[str] = set()  # calls whose change set was shown to be approved
        self._command: str | None = None  # the call id of the command running (or ended, its output not drawn)
        self._ran: set[str] = set()  # commands that started running
        self._resulted: set[str] = set()  # calls whose result came
        self._grouped = False  # the last thing printed was a compact line: the next one joins its group
        self._elided = ""  # the turn's latest "old tool results elided" warning
        self.thoughts: list[str] = []  # the turn's thinking, one entry a model request, for /expand
        self.turn: list[Any] = []  # the turn in order for /expand: thoughts, plan updates, (call, result) pairs
        self._thinking: str | None = None  # the thinking streaming now, folded to one line when the answer starts
        self._plan: ev.PlanUpdated | None = None  # the model's checklist this turn, kept in the live region
        self._sub_calls: dict[str, ToolCall] = {}  # a sub-task's calls (task tool), for /expand

    def __call__(self, event: ev.Event) -> None:
        self._checks.see(event)
        self._tally.see(event)
        getattr(self, "_on_" + event.type, lambda event: None)(event)  # an event with no handler draws nothing

    def print(self, renderable: RenderableType) -> None:
        self._grouped = False
        self.console.print(renderable)

    def close(self) -> None:
        """Stop the live region (the REPL calls this in `finally`)."""
        if self._live is not None:
            live, self._live = self._live, None
            with _signals_held():
                live.stop()
        self._working = None

    def refresh(self) -> None:
        """Redraw the live region now (what the user typed changed)."""
        if self._live is not None:
            self._live.refresh()

    def _start_working(self, command: bool = False) -> None:
        self.close()
        self._working = Working(self.clock, self.typed, self._hint, command)
        if self._plan is not None:
            self._working.plan = plan_text(self._plan, self.console.width)
        if self.live:
            from rich.live import Live  # deferred: Rich is not on a one-shot run's path

            live = Live(self._working, console=self.console, transient=True, refresh_per_second=8,
                        vertical_overflow="crop")
            with _signals_held():
                live.start()
                self._live = live

    def _hint(self) -> str:
        if self.one_shot:
            return "Ctrl-C interrupts"
        return "Esc or Ctrl-C interrupts" + (f" · ⇧Tab: {self.mode()}" if self.mode is not None else "")

    def _on_run_started(self, event: ev.RunStarted) -> None:
        self._protocol = event.protocol
        self._started = self.clock()
        self._plan = None

    def _on_plan_updated(self, event: ev.PlanUpdated) -> None:
        self._plan = event
        self.turn.append(event)
        self.print(plan_text(event, self.console.width))  # each update stays in the scrollback, as the turn goes on

    def _on_model_request(self, event: ev.ModelRequest) -> None:
        self._start_working()

    def _on_thinking_delta(self, event: ev.ThinkingDelta) -> None:
        self._thinking = (self._thinking or "") + event.text
        if self._working is not None:
            self._working.thinking = self._thinking

    def _fold_thinking(self) -> None:
        """The thinking, once the answer starts, as one dim line (`/expand` shows it whole)."""
        if self._thinking is None:
            return
        thought, self._thinking = self._thinking, None
        self.thoughts.append(thought)
        self.turn.append(thought)
        if self._working is not None:
            self._working.thinking = ""
        first, words = " ".join(thought.split()), len(thought.split())
        count = f"({words} words{'' if self.one_shot else ' · /expand'})"  # a one-shot run has no /expand
        room = max(self.console.width - len("✻ thought: ") - len(count) - 2, 10)  # one line, whatever the width
        shown = first if len(first) <= room else first[:room - 1].rstrip() + "…"
        self.console.print(Text(f"✻ thought: {esc(shown)} {count}", style="dim italic", no_wrap=True,
                                overflow="ellipsis"))

    def _on_text_delta(self, event: ev.TextDelta) -> None:
        self._fold_thinking()
        if self._working is not None:
            self._working.text += event.text

    def _on_assistant_message(self, event: ev.AssistantMessage) -> None:
        self._fold_thinking()
        self.close()
        if self._protocol != "json" and event.text.strip():
            self.print(markdown(event.text))

    def _on_tool_calls_proposed(self, event: ev.ToolCallsProposed) -> None:
        self._calls.update((c.id, c) for c in event.calls)
        asking = [c for c in event.calls if not self.compact(c.name)]
        if len(asking) > 1:
            lines = Text(f"The model proposes {len(event.calls)} calls:", style="bold")
            for n, call in enumerate(event.calls, 1):
                lines.append(f"\n  {n}. ")
                lines.append_text(call_title(call))
            self.print(lines)

    def _on_approval_asked(self, event: ev.ApprovalAsked) -> None:
        self._end_command()  # a command's output comes before the question about its changes
        self.close()
        self._grouped = False
        self._shown.add(event.call.id)  # the approver draws the panel and asks
        if event.changes:
            self._asked_changes.add(event.call.id)

    def _on_approval_decided(self, event: ev.ApprovalDecided) -> None:
        if event.by == "user":
            self._approved_by.pop(event.call_id, None)
            if event.rule:  # "always": the rule written
                self.print(Text.assemble(("  ✓ ", "green"), (esc(event.rule), "dim")))
        elif event.by in ("policy", "rule") and event.decision.approves and event.rule:
            if event.call_id in self._calls and self._calls[event.call_id].name == "run_command" \
                    and event.call_id not in self._ran:
                return  # that a sandboxed command may run says nothing about its changes
            self._approved_by[event.call_id] = event.rule
        elif not event.decision.approves:
            self.print(Text.assemble(("  ✗ refused: ", "red"), (esc(event.rule or event.by), "red")))

    def _on_command_output(self, event: ev.CommandOutput) -> None:
        """The first (empty) says the command started: `$ COMMAND`, then its output's tail under a spinner."""
        if self._command != event.call_id:
            self._end_command()
            self.close()
            call = self._calls.get(event.call_id)
            first = event.call_id not in self._ran
            self._command = event.call_id  # noted before drawing: a Ctrl-C may land while it draws
            self._ran.add(event.call_id)
            if first:
                self.print(command_line(str((call.arguments or {}).get("command", "")) if call is not None else ""))
            self._start_working(command=True)
        if self._working is not None:
            self._working.add(event.text)

    def _end_command(self, output: str | None = None) -> None:
        """The ended command's output, drawn once: `output` (its result's) or else the tail the live region had."""
        if self._command is None:
            return

        live = self._working.text if self._working is not None and self._working.command else ""
        self._command = None
        self.close()
        block = output_block(live if output is None else output)
        if block is not None:
            self.print(block)

    def _on_tool_result(self, event: ev.ToolResult) -> None:
        self._resulted.add(event.call_id)
        call = self._calls.get(event.call_id)
        self.turn.append((call, event))
        if event.tool == "task":  # the sub-task's line in the live region gives way to its result's
            self.close()
        data = event.envelope.data
        if isinstance(data, dict) and "exit_code" in data:
            if self._command == event.call_id:
                self._end_command(str(data.get("output", "")))
            if event.changes and event.call_id not in self._asked_changes and call is not None:
                self.print(changes_panel(call, event.changes))  # applied unasked: what it changed is still shown
            self.folded.append((call, event))
            self.print(command_result(event, self._approved_by.get(event.call_id, "")))
            return
        self._end_command()
        if event.changes and event.call_id not in self._asked_changes and call is not None:
            self._shown.add(event.call_id)
            self.print(changes_panel(call, event.changes))
        if event.change is None and event.call_id not in self._shown and self.compact(event.tool):
            self.folded.append((call, event))
            self.console.print(compact_line(event, call, first=not self._grouped, width=self.console.width))
            self._grouped = True
            return
        if call is not None and event.call_id not in self._shown:
            self._shown.add(event.call_id)
            self.print(call_panel(call, event.change))
        self.print(hung(result_line(event, call, self._approved_by.get(event.call_id, ""), width=self.console.width)))

    def _on_warning(self, event: ev.Warning) -> None:
        if event.code == "truncated":  # said in the line of the call it belongs to
            return
        if event.code == "context_elided":  # may come at every step: said once, at the end of the turn
            self._elided = event.message
            return
        self.print(Text("! " + esc(event.message), style="yellow"))

    def _on_subagent_event(self, event: ev.SubagentEvent) -> None:
        """A sub-task at work: one line in the live region, its latest call; its calls are kept for /expand."""
        inner, doing = event.event, ""
        if inner.get("type") == "tool_calls_proposed":
            calls = [ToolCall.from_dict(c) for c in inner.get("calls", ())]
            self._sub_calls.update((c.id, c) for c in calls)
            doing = ", ".join(c.name for c in calls)
        elif inner.get("type") == "tool_result":
            result = ev.event_from_dict(inner)
            if isinstance(result, ev.ToolResult):
                self.folded.append((self._sub_calls.get(result.call_id), result))
        elif inner.get("type") == "model_request":
            doing = "thinking"
        if not doing:
            return
        if self._working is None:
            self._start_working()
        if self._working is not None:
            self._working.task = f"⟳ task: {event.description} · {doing}"

    def _on_hook_ran(self, event: ev.HookRan) -> None:
        self.turn.append(event)
        self._end_command()
        self.close()
        self.print(hook_line(event, self.console.width))

    def _on_network_connection(self, event: ev.NetworkConnection) -> None:
        """One line under its command, above the command's live tail."""
        self.print(Text(f"  ⇄ {esc(event.line)}", style="dim" if event.allowed else "yellow"))

    def _on_verification(self, event: ev.Verification) -> None:
        self.print(self._checks.line(event))

    def _on_retry(self, event: ev.Retry) -> None:
        self.print(hanging(Text(f"retrying in {event.delay_s:.1f}s ", style="dim"),
                           Text(f"(attempt {event.attempt}): {esc(event.reason)}", style="dim")))

    def _on_run_finished(self, event: ev.RunFinished) -> None:
        stopped = event.stop_reason in _INTERRUPTED and bool(self._ran - self._resulted)  # a command with no result
        self._end_command()  # an interrupted command: what it had printed stays on screen
        if stopped:
            self.print(Text("  ✗ the command was stopped; none of its file changes were applied", style="yellow"))
        partial = self._working.text if self._working is not None else ""
        self.close()
        if event.stop_reason in _INTERRUPTED and partial.strip() and self._protocol != "json":
            self.print(markdown(partial))  # what had streamed stays on screen
            self.print(Text("(interrupted)", style="yellow"))
        if self._protocol == "json" and event.answer.strip():
            self.print(markdown(event.answer))
        if self._elided:
            self.print(Text("! " + esc(self._elided), style="yellow"))
        if self._plan is not None:
            self.print(plan_summary(self._plan))
        changed = self._tally.line(event)
        if changed is not None:
            self.print(Text(esc(changed), style="dim"))
        if not self.one_shot or event.stop_reason is ev.StopReason.DONE:
            self.print(finish_line(event, self.clock() - self._started))

"""What a resumed session shows: its transcript, the last turns drawn as they were and the older ones folded into a
line each, and the totals the toolbar had; and the one-paragraph preview the `/resume` picker shows for a session.

Only what follows the last `/clear` or `/compact` is live; what came before is folded into one line too.

The files a session changed are those its calls wrote, a command's change set included; with the workspace's undo
journal at hand (`preview(trace, turns, session)`), a file whose every change in the session was undone is left
out.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from typing import TYPE_CHECKING

from rich.console import Console
from rich.text import Text

from cli_agent.contracts import (
    ApprovalAsked,
    ApprovalDecided,
    ConversationReset,
    Event,
    RunFinished,
    RunStarted,
    ToolCallsProposed,
    ToolResult,
    Usage,
    dataclass,
)
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.approve import decided_line, render_call
from cli_agent.ui.view.command_panel import hanging
from cli_agent.ui.view.render import Renderer

if TYPE_CHECKING:
    from cli_agent.history import Trace, Turn

__all__ = ["preview", "show_transcript", "undone_runs"]

SHOWN_TURNS = 3  # the newest turns drawn in full on a resume


@dataclass(frozen=True)
class Summary:
    turns: int
    steps: int
    usage: Usage
    files: tuple[str, ...]  # the files its turns changed
    first_message: str
    started: float


def asked(started: RunStarted) -> str:
    """What the user asked for in a run: what they typed (`/refactor calc.py`), else the run's prompt."""
    return started.command or started.prompt


def _turns(events: Iterable[Event]) -> list[list[Event]]:
    out: list[list[Event]] = []
    for event in events:
        if isinstance(event, RunStarted):
            out.append([])
        if out:
            out[-1].append(event)
    return out


def _changed(run: list[Event]) -> list[str]:
    """The files the run's calls wrote: a file tool's change, a command's (or a rename's) change set (in a trace,
    the paths its result says were applied); else the path the file tool was called with."""
    calls = {c.id: c for e in run if isinstance(e, ToolCallsProposed) for c in e.calls}
    files = []
    for e in run:
        if not isinstance(e, ToolResult) or not e.envelope.ok:
            continue
        written = [c.path for c in (e.change, *e.changes) if c is not None]  # a live run's events
        data = e.envelope.data
        applied = data.get("applied") if isinstance(data, dict) else None  # a command's, as a trace keeps it
        if isinstance(applied, list):
            written += [path for path in applied if isinstance(path, str) and path not in written]
        if written:
            files += written
        elif e.call_id in calls:
            args = calls[e.call_id].arguments or {}
            if _writes_files(e.tool) and isinstance(args.get("path"), str):
                files.append(args["path"])
    return files


def _writes_files(tool: str) -> bool:
    """A built-in tool whose spec says it mutates: the path it is called with is a file it changed."""
    from cli_agent.tools import Registry  # deferred: the agent's stack loads behind the REPL's first prompt (Startup)

    builtin = Registry.builtin()
    return tool in builtin and builtin.get(tool).mutates


def _undone(session: str, turns: Iterable[Turn]) -> set[str]:
    """The files of `session` whose every change in the journal was undone."""
    undone: set[str] = set()
    kept: set[str] = set()
    for turn in turns:
        if turn.session == session:
            (undone if turn.undone else kept).update(e.path for e in turn.changes)
    return undone - kept


def summarise(trace: Trace, turns: Iterable[Turn] = (), session: str = "") -> Summary:
    """Turns, steps, tokens and cost, and the files changed, over the whole trace; `turns`: the workspace's undo
    journal, whose files undone in `session` (the session's id) are left out."""
    runs = _turns(trace.events)
    finished = [e for run in runs for e in run if isinstance(e, RunFinished)]
    usage = Usage()
    for f in finished:
        usage = usage + f.usage
    first = next((run[0] for run in runs if isinstance(run[0], RunStarted)), None)
    undone = _undone(session, turns) if session else set()
    files = tuple(dict.fromkeys(p for run in runs for p in _changed(run) if p not in undone))
    return Summary(len(runs), sum(f.steps for f in finished), usage, files,
                   asked(first) if isinstance(first, RunStarted) else "", first.time if first else 0.0)


def preview(trace: Trace, turns: Iterable[Turn] = (), session: str = "") -> str:
    """The picker's preview of a session: when, its first message, how many turns, which files changed (those
    undone since left out, given the workspace's journal `turns` and the session's id)."""
    s = summarise(trace, turns, session)
    when = time.strftime("%Y-%m-%d %H:%M", time.localtime(s.started)) if s.started else "-"
    files = ", ".join(s.files[:6]) + (f" and {len(s.files) - 6} more" if len(s.files) > 6 else "")
    return esc(f"{when} · {s.turns} turn{'s' if s.turns != 1 else ''} · files changed: {files or 'none'}\n"
               f"first message: {_one_line(s.first_message, 200)}")


def _one_line(text: str, width: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"


def undone_runs(trace: Trace, turns: Iterable[Turn], session: str) -> set[str]:
    """The run ids of `trace` whose changes were undone since (`/undo`), from the workspace's journal `turns`: a
    journal turn belongs to the last run of `session` started before its first change."""
    starts = sorted((e.time, e.run_id) for e in trace.events if isinstance(e, RunStarted))
    out: set[str] = set()
    for turn in turns:
        if turn.undone and turn.session == session:
            before = [run_id for started, run_id in starts if started <= turn.time]
            if before:
                out.add(before[-1])
    return out


class _EventClock:
    """The time of the event being drawn, for a transcript's turn durations (NaN when the trace did not keep it)."""

    def __init__(self) -> None:
        self.now = float("nan")

    def __call__(self) -> float:
        return self.now

    def at(self, event: Event) -> None:
        when = getattr(event, "time", None)
        if isinstance(event, RunStarted | RunFinished):
            self.now = when if isinstance(when, float | int) and when > 0 else float("nan")


def show_transcript(console: Console, trace: Trace, *, compact: object = None, undone: AbstractSet[str] = frozenset()) \
        -> Summary:
    """Draw the session on `console`: folded lines for the older turns (and for everything before the last reset),
    the newest `SHOWN_TURNS` as they were; `undone`: the run ids whose changes `/undo` reverted since. Returns the
    totals for the toolbar."""
    events = list(trace.events)
    cut = max((i for i, e in enumerate(events) if isinstance(e, ConversationReset)), default=-1)
    reset = events[cut] if cut >= 0 else None
    rewound: list[list[Event]] = []
    after: list[Event] = []
    if isinstance(reset, ConversationReset) and reset.kind == "rewind":  # live: the turns before the rewound one
        at = next((i for i, e in enumerate(events) if isinstance(e, RunStarted) and e.run_id == reset.run_id), cut)
        rewound, after = _turns(events[at:cut]), events[cut + 1:]
        events, cut = events[:at], max((i for i, e in enumerate(events[:at]) if isinstance(e, ConversationReset)),
                                       default=-1)
        reset = events[cut] if cut >= 0 else None
    before, live = _turns(events[:cut + 1]), _turns(events[cut + 1:]) + _turns(after)
    if before and isinstance(reset, ConversationReset):
        console.print(Text(f"… {len(before)} turn{'s' if len(before) != 1 else ''} before the last /{reset.kind} "
                           "(not in the conversation)", style="dim"))
    older, newest = live[:-SHOWN_TURNS], live[-SHOWN_TURNS:]
    for run in older:
        console.print(_folded(run, undone))
    if rewound:
        console.print(Text(f"… {len(rewound)} turn{'s' if len(rewound) != 1 else ''} rewound (/rewind: kept in the "
                           "trace, not in the conversation)", style="dim"))
    for run in newest:
        _draw_run(console, run, compact, undone)
    console.print(Text("── resumed: the conversation goes on from here ──", style="green"))
    return summarise(trace)


_UNDONE = "  ↶ undone since (/undo)"


def _draw_run(console: Console, run: list[Event], compact: object, undone: AbstractSet[str]) -> None:
    """One turn as it was drawn when it ran: its prompt, calls, panels, answers and closing line."""
    started = run[0]
    if isinstance(started, RunStarted):
        line = Text.assemble(("› ", "bold cyan"), (esc(_one_line(asked(started), 400)), "bold"))
        if started.run_id in undone:
            line.append(_UNDONE, style="yellow")
        console.print(line)
    clock = _EventClock()
    renderer = Renderer(console, compact=compact if callable(compact) else None, clock=clock)
    renderer.live = False  # a transcript, not a run: no spinner
    for event in run:
        clock.at(event)
        renderer(event)  # first: a command's output comes before the question about its changes
        if isinstance(event, ApprovalAsked):
            console.print(render_call(event))
        elif isinstance(event, ApprovalDecided) and event.by == "user":
            said = decided_line(event.decision, event.feedback)
            console.print(hanging(said[:4], said[4:]))


def _folded(run: list[Event], undone: AbstractSet[str] = frozenset()) -> Text:
    started = run[0]
    finished = next((e for e in run if isinstance(e, RunFinished)), None)
    prompt = asked(started) if isinstance(started, RunStarted) else ""
    answer = finished.answer if finished is not None and finished.answer else (
        finished.stop_reason.value if finished is not None else "")
    files = _changed(run)
    line = Text.assemble(("› ", "dim"), esc(_one_line(prompt, 60)))
    if answer:
        line.append("  → " + esc(_one_line(answer, 60)), style="dim")
    if files:
        line.append(f"  ({len(files)} file{'s' if len(files) != 1 else ''} changed)", style="dim")
    if isinstance(started, RunStarted) and started.run_id in undone:
        line.append(_UNDONE, style="yellow")
    return line

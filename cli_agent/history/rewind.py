"""Rewinding a session to before one of its prompts: the prompts it can go back to, each with the files its turn
changed (`rewind_points`, newest first), and the files put back as they were (`rewind_files`, the undo of every
turn from that prompt on, newest first).

    points = rewind_points(trace, journal, session_id)    # [RewindPoint(run_id, prompt, files, turns), ...]
    done = rewind_files(journal, points[2])               # ["turn 5: restored a.py", ...]

The conversation's side is a `ConversationReset(kind="rewind", run_id=...)` in the trace: `Trace.conversation`
goes back to the conversation as that run found it, so a resumed session starts there, and the runs after it stay
in the trace, marked rewound by the reset that follows them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli_agent.contracts import ConversationReset, RunStarted, dataclass
from cli_agent.history.undo import undo_turn

if TYPE_CHECKING:
    from cli_agent.history.journal import Journal
    from cli_agent.history.trace import Trace

__all__ = ["RewindPoint", "rewind_files", "rewind_points"]


@dataclass(frozen=True)
class RewindPoint:
    run_id: str
    prompt: str  # what the user typed
    files: tuple[str, ...] = ()  # the files its own turn changed
    turns: tuple[int, ...] = ()  # the undo turns of this prompt and every later one (not undone yet)


def rewind_points(trace: Trace, journal: Journal | None, session_id: str) -> list[RewindPoint]:
    """The user's prompts of the session that a rewind can go back to before, newest first: a compaction's own
    request and the prompts already rewound are left out."""
    live: list[RunStarted] = []
    for run in trace.runs:
        if run and isinstance(run[0], RunStarted):
            live.append(run[0])
        for event in run:
            if isinstance(event, ConversationReset) and event.kind == "compact" and live:
                live.pop()  # the run that wrote the summary
            elif isinstance(event, ConversationReset) and event.kind == "rewind":
                at = next((i for i, r in enumerate(live) if r.run_id == event.run_id), None)
                live = live if at is None else live[:at]
    turns = [t for t in (journal.turns() if journal is not None and journal.file.exists() else [])
             if session_id and t.session == session_id and not t.undone]
    owned: list[tuple[int, tuple[str, ...]] | None] = []
    for started in live:  # each run's turn, matched in order by what was asked
        typed = started.command or started.prompt
        index = next((i for i, t in enumerate(turns) if t.prompt == typed), None)
        if index is None:
            owned.append(None)
            continue
        turn = turns.pop(index)
        owned.append((turn.number, tuple(sorted({c.path for c in turn.changes}))))
    points = []
    for i, started in enumerate(live):
        later = tuple(o[0] for o in owned[i:] if o is not None)
        mine = owned[i]
        points.append(RewindPoint(started.run_id, started.command or started.prompt, mine[1] if mine else (), later))
    return points[::-1]


def rewind_files(journal: Journal, point: RewindPoint) -> list[str]:
    """Undo every turn of `point` and after it, newest first; what was done, a line a turn. A file changed since
    stops it (errors.CliAgentError naming the file), with the turns undone so far staying undone."""
    done = []
    for turn in sorted(point.turns, reverse=True):
        undone = undo_turn(journal, turn, listing="/undo list")
        done.append(f"turn {undone.turn}: " + (", ".join(undone.done) or "nothing left to revert"))
    return done

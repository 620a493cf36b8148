"""Stuck-call detection: the model sends the same failing call again and again, in a row or between other calls
that change nothing (a pair of failing edits in turn loops as surely as one). The second failure of a call gets a
note for the model (`REPEAT_NOTE`); at `MAX_REPEATS` failures since the last change that landed the run ends, as a
failed change (exit 7) when the call was a change, else as unusable output (exit 6)."""

from __future__ import annotations

import json
from dataclasses import replace

from cli_agent.agent.run_state import RunState
from cli_agent.contracts import Envelope, StopReason, ToolCall

MAX_REPEATS = 3  # the same call failing the same way this many times since the last change ends the run (exit 7/6)
REPEAT_NOTE = ("this exact call already failed the same way, and will again: change its arguments (copy the file's "
               "text exactly from the lines shown) or do something else")


def count_repeats(run: RunState, call: ToolCall, envelope: Envelope, mutates: bool) -> int:
    """How many times this call has now failed this way since the last change that landed (0: it did not fail).
    Only a change that lands starts the count again: a stuck model reads the file again, or sends another failing
    call in between, and then the same failing edit."""
    if envelope.ok:
        if mutates:
            run.repeats.clear()
            run.last_failure, run.in_a_row = "", 0
        return 0
    arguments = json.dumps(call.arguments, sort_keys=True, default=str)
    key = "\0".join((call.name, arguments, *envelope.errors))
    run.repeats[key] = run.repeats.get(key, 0) + 1
    run.in_a_row = run.in_a_row + 1 if run.last_failure == key else 1
    run.last_failure = key
    return run.repeats[key]


def noted(envelope: Envelope, repeats: int) -> Envelope:
    """The envelope, with `REPEAT_NOTE` among its warnings when the next same failure would end the run."""
    return replace(envelope, warnings=(*envelope.warnings, REPEAT_NOTE)) if repeats == MAX_REPEATS - 1 else envelope


def stuck(run: RunState, call: ToolCall, envelope: Envelope) -> tuple[StopReason, str]:
    """How a run whose model is stuck on `call` ends: a failed change (exit 7), anything else unusable (exit 6)."""
    why = "; ".join(envelope.errors)[:300]
    when = "in a row" if run.in_a_row >= MAX_REPEATS else "since the last change that landed"
    message = f"the model sent the same failing call {MAX_REPEATS} times {when} ({call.name}: {why})"
    return (StopReason.UNUSABLE if run.failed_change is None else StopReason.CHANGE_FAILED), message

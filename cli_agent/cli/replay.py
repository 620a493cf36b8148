"""The replay command, `cli-agent replay TRACE [--output json] [--run-commands]`: the replay (`cli_agent.replay`)
run with the replayed events printed as they come, then its summary (text) or one JSON object, and the exit code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from cli_agent.contracts import (
    ApprovalDecided,
    Event,
    RunFinished,
    RunStarted,
    ToolCallsProposed,
    ToolResult,
    errors,
    escape_for_terminal,
    json_for_output,
)
from cli_agent.replay import replay, short


def run_replay(path: Path, output: str = "text", *, run_commands: bool = False) -> int:
    """`cli-agent replay TRACE [--run-commands]`: the replayed events (text) or one JSON object, then exit 0 if the
    replay went as recorded; a divergence is a one-line CliAgentError (exit 1)."""
    if output not in ("text", "json"):
        raise errors.UsageError(f"--output must be text or json for replay, not {output!r}")
    result = replay(path, *([] if output == "json" else [_print_event]), run_commands=run_commands)
    if output == "json":
        sys.stdout.write(json_for_output(result.to_dict()) + "\n")
    else:
        for note in result.notes:
            sys.stdout.write(escape_for_terminal(f"note: {note}") + "\n")
        if result.divergence is None:
            dry = (f"; {result.played_back} command(s) played back from the trace, not run (--run-commands runs "
                   "them in the sandbox)") if result.played_back else ""
            sys.stdout.write(f"replay identical: {result.runs} run(s), {result.tool_calls} tool call(s), stop "
                             f"reason(s) {', '.join(result.stop_reasons)}{dry}\n")
    sys.stdout.flush()
    if result.divergence is not None:
        hint = (f" ({result.played_back} command(s) were played back, not run, so their file changes are not in "
                "the copy: --run-commands runs them in the sandbox)") if result.played_back else ""
        raise errors.CliAgentError(f"replay diverged: {result.divergence.message}{hint}")
    return 0


def _print_event(event: Event) -> None:
    line = None
    if isinstance(event, RunStarted):
        line = f"run: {short(event.prompt, 100)}"
    elif isinstance(event, ToolCallsProposed):
        line = "\n".join(f"  → {c.name} {short(c.raw_arguments or json.dumps(c.arguments))}" for c in event.calls)
    elif isinstance(event, ApprovalDecided):
        line = f"    {'approved' if event.decision.approves else 'denied'}"
    elif isinstance(event, ToolResult):
        detail = event.change.summary if event.change else "; ".join(event.envelope.errors)
        line = f"    {'✓' if event.envelope.ok else '✗'} {event.tool} {short(detail)}".rstrip()
    elif isinstance(event, RunFinished):
        line = f"  ■ {event.stop_reason.value}: {short(event.message)}"
        if event.answer:
            line += f"\n  {short(event.answer, 300)}"
    if line is not None:
        sys.stdout.write(escape_for_terminal(line) + "\n")

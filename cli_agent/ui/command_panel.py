"""How commands and change sets look in the REPL: the panel of a change set to approve (each file like an edit_file
change, or a summary table when there are many), the live tail of a running command, and its result (exit code,
output tail, what was applied)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cli_agent.ui.change_view import call_title, change_body
from cli_agent.ui.escape import escape_for_terminal as esc

if TYPE_CHECKING:
    from cli_agent.change import Change
    from cli_agent.events import ToolResult
    from cli_agent.messages import ToolCall

__all__ = ["DIFFS_SHOWN", "changes_panel", "command_result", "output_tail"]

DIFFS_SHOWN = 5  # files whose diff is drawn; more than that get a one-line summary each
TAIL_LINES = 12


def _headline(call: ToolCall) -> Text:
    args = call.arguments or {}
    if call.name == "run_command":
        return Text.assemble(("$ ", "bold"), (esc(str(args.get("command", ""))), "bold"))
    return Text(esc(" → ".join(str(args[k]) for k in ("path", "new_path") if k in args)), style="bold")


def changes_panel(call: ToolCall, changes: Sequence[Change], *, index: int = 0, total: int = 0) -> Panel:
    """A set of changes applied as one: each file's diff (up to DIFFS_SHOWN), else a table of files."""
    counts: dict[str, int] = {}
    for change in changes:
        counts[change.kind] = counts.get(change.kind, 0) + 1
    summary = ", ".join(f"{n} {kind}" for kind, n in counts.items())
    parts: list[RenderableType] = [_headline(call), Text(f"{len(changes)} file(s) to apply: {summary}", style="dim")]
    if len(changes) <= DIFFS_SHOWN:
        for change in changes:
            parts.append(Text.assemble(("\n" + esc(change.path), "bold cyan"), ("  " + esc(change.summary), "dim")))
            parts.append(change_body(change))
    else:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("file", "change", "+", "-"):
            table.add_column(column)
        for change in changes:
            added, removed = change.stats() if change.before != change.after else (0, 0)
            table.add_row(esc(change.path), esc(change.summary or change.kind), str(added), str(removed))
        parts.append(table)
    deletes = any(c.kind == "delete" for c in changes)
    return Panel(Group(*parts), title=call_title(call, index, total), title_align="left",
                 border_style="red" if deletes else "yellow")


def output_tail(text: str, lines: int = TAIL_LINES) -> Text:
    shown = text.rstrip("\n").splitlines()[-lines:]
    return Text(esc("\n".join("  │ " + line for line in shown)), style="dim")


def command_result(result: ToolResult, approved_by: str = "") -> RenderableType:
    """A command's outcome: exit code, time, output tail, and what happened to its changes."""
    data: dict[str, Any] = result.envelope.data if isinstance(result.envelope.data, dict) else {}
    code = data.get("exit_code")
    ok = code == 0 and not data.get("timed_out")
    status = "timed out" if data.get("timed_out") else f"exit {code}"
    head = Text.assemble(("  ✓ " if ok else "  ✗ ", "bold green" if ok else "bold red"), ("run_command ", "bold"),
                         (status, "green" if ok else "red"),
                         f"  {data.get('duration_s', 0):.1f}s, {data.get('output_bytes', 0):,} bytes of output")
    changes = data.get("changes") or {}
    if changes.get("summary"):
        head.append("\n    changes: " + esc(changes["summary"]), style="dim")
    if data.get("applied"):
        head.append(f"\n    applied: {esc(', '.join(data['applied'][:10]))}" +
                    (" …" if len(data["applied"]) > 10 else ""), style="green")
    for reason in result.envelope.errors:
        head.append("\n    " + esc(reason), style="red")
    if approved_by:
        head.append(f"  (approved by {esc(approved_by)})", style="dim")
    output = str(data.get("output", ""))
    return Group(head, output_tail(output)) if output.strip() else head

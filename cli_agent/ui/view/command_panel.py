"""How commands and change sets look in the REPL: the panel of a change set to approve (each file like an edit_file
change, or a summary table when there are many), and a command as it runs and once it has:

    $ python -m pytest -q                      the whole command, wrapped under itself, never cut
      │ … 40 earlier lines (/expand)           what was left out of the output drawn
      │ tests/test_calc.py ....... [100%]      whole lines, wrapped inside the margin
      ✓ run_command exit 0  1.1s, 382 bytes of output

The output is drawn once, when the command has ended; while it runs, its tail is in the live region."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console, ConsoleOptions, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.change_view import call_title, change_body

if TYPE_CHECKING:
    from cli_agent.contracts import Change, ToolCall, ToolResult

__all__ = ["command_expanded", "hanging"]

DIFFS_SHOWN = 5  # files whose diff is drawn; more than that get a one-line summary each
TAIL_LINES = 12  # lines of a finished command's output drawn in the transcript (all of it: /expand)
LIVE_LINES = 6  # lines of a running command's output in the live region
_MARGIN = "  │ "
_PADDING = re.compile(r"(?<=\S) {3,}(?=\S)")


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
            parts.append(Text.assemble(("\n" + esc(change.path), "bold cyan"), ("  " + esc(_said(change)), "dim")))
            parts.append(change_body(change))
    else:
        table = Table(show_header=True, header_style="bold", box=None, pad_edge=False)
        for column in ("file", "change", "+", "-"):
            table.add_column(column)
        for change in changes:
            added, removed = change.stats() if change.before != change.after else (0, 0)
            table.add_row(esc(change.path), esc(_said(change)), str(added), str(removed))
        parts.append(table)
    deletes = any(c.kind == "delete" for c in changes)
    return Panel(Group(*parts), title=call_title(call, index, total), title_align="left",
                 border_style="red" if deletes else "yellow")


def _said(change: Change) -> str:
    """What a change does, without its path again (the path heads its part of the panel)."""
    summary = change.summary or change.kind
    return summary.replace(f" {change.path}", "", 1) if summary.startswith(f"{change.kind} {change.path}") else summary


def hanging(prefix: Text, body: Text) -> Table:
    """`prefix` then `body`, whose lines wrap under the body's first character (never to column 0)."""
    grid = Table.grid()
    grid.add_column(no_wrap=True)
    grid.add_column(overflow="fold")
    grid.add_row(prefix, body)
    return grid


def command_line(command: str) -> Table:
    """`$ COMMAND`, whole, wrapped under itself."""
    return hanging(Text("$ ", style="bold"), Text(esc(command), style="bold"))


def output_lines(text: str) -> list[str]:
    """A command's output as a terminal would leave it: each line as its last carriage return rewrote it, without
    the trailing blank lines."""
    lines = []
    for line in text.replace("\r\n", "\n").split("\n"):
        if "\r" in line:
            line = next((part for part in reversed(line.split("\r")) if part), "")
        lines.append(line)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


class _Output:
    """Lines of output, each wrapped to the width left of the margin, every screen line behind `  │ `."""

    def __init__(self, lines: list[Text]) -> None:
        self.lines = lines

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Text]:
        width = max(8, options.max_width - len(_MARGIN))
        for line in self.lines:
            for part in _narrowed(line, width).wrap(console, width, overflow="fold") or [Text("")]:
                yield Text.assemble((_MARGIN, "dim"), part, end="")
                yield Text("\n", end="")


def _narrowed(line: Text, width: int) -> Text:
    """A line too wide for `width` whose padding can give way (pytest's `..      [100%]`): its longest run of spaces
    shortened, down to two, so that it fits; any other line as it is (it wraps)."""
    excess = line.cell_len - width
    plain = line.plain
    runs = list(_PADDING.finditer(plain)) if excess > 0 else []
    if not runs:
        return line
    run = max(runs, key=lambda m: len(m.group()))
    keep = max(2, len(run.group()) - excess)
    return Text(plain[:run.start()] + " " * keep + plain[run.end():], style=line.style)


def output_block(text: str, lines: int | None = TAIL_LINES, *, more: str = " (/expand)") -> _Output | None:
    """The last `lines` lines of a command's output (None: all of them) inside the `│` margin, a long line wrapped
    inside it too, under a line saying how many were left out; None when there is no output."""
    every = output_lines(text)
    if not every:
        return None
    shown = every if lines is None else every[-lines:]
    rows = [Text(esc(line), style="dim") for line in shown]
    left_out = len(every) - len(shown)
    if left_out:
        rows.insert(0, Text(f"… {left_out:,} earlier line{'s' if left_out != 1 else ''}{more}", style="dim italic"))
    return _Output(rows)


def command_expanded(call: ToolCall | None, result: ToolResult) -> RenderableType:
    """/expand: a command, all of its output that was kept, and its result line."""
    data: dict[str, Any] = result.envelope.data if isinstance(result.envelope.data, dict) else {}
    command = data.get("command") or (call.arguments or {} if call is not None else {}).get("command", "")
    parts: list[RenderableType] = [command_line(str(command))]
    block = output_block(str(data.get("output", "")), None)
    if block is not None:
        parts.append(block)
    parts.append(command_result(result, every=True))
    return Group(*parts)


def command_result(result: ToolResult, approved_by: str = "", *, every: bool = False) -> RenderableType:
    """A command's outcome in its result line: exit code, time, output size, and what happened to its changes (a
    command that changed no file says nothing of them, unless `every`: /expand); each part wraps under the first
    word after the mark."""
    data: dict[str, Any] = result.envelope.data if isinstance(result.envelope.data, dict) else {}
    code = data.get("exit_code")
    ok = code == 0 and not data.get("timed_out")
    status = "timed out" if data.get("timed_out") else f"exit {code}"
    body = Text.assemble(("run_command ", "bold"), (status, "green" if ok else "red"),
                         f"  {data.get('duration_s', 0):.1f}s, {data.get('output_bytes', 0):,} bytes of output")
    changes = data.get("changes") or {}
    if changes.get("summary") and (every or changes.get("files") or changes.get("renames")):
        body.append("\nchanges: " + esc(changes["summary"]), style="dim")
    if data.get("applied"):
        body.append(f"\napplied: {esc(', '.join(data['applied'][:10]))}" +
                    (" …" if len(data["applied"]) > 10 else ""), style="green")
    for reason in result.envelope.errors:
        body.append("\n" + esc(reason), style="red")
    if data.get("environment"):
        body.append("\n" + esc(str(data["environment"])), style="dim")
    if approved_by:
        body.append(f"  (approved by {esc(approved_by)})", style="dim")
    return hanging(Text("  ✓ " if ok else "  ✗ ", style="bold green" if ok else "bold red"), body)

"""How one tool call and the change it makes look: the call's title, its arguments, and the body of a change (the
diff of an edit, the new content of a create, the head of a delete), folded when long. Shared by the transcript
(`render`), the approval question (`approve`) and the change-set panel (`command_panel`)."""

from __future__ import annotations

import json

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.text import Text

from cli_agent.contracts import Change, ToolCall
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.transcript import target_of

FOLD_LINES = 30  # lines of new content shown before the rest is folded (a diff gets twice as many)
_VALUE_CHARS = 300  # characters of one argument shown in a panel


def _fold(text: str, limit: int | None = FOLD_LINES) -> tuple[str, int]:
    lines = text.splitlines()
    if limit is None or len(lines) <= limit:
        return text, 0
    return "\n".join(lines[:limit]), len(lines) - limit


def _lexer(path: str) -> str:
    from pygments.lexers import get_lexer_for_filename  # deferred: Pygments, when a diff is first coloured
    from pygments.util import ClassNotFound

    try:
        return get_lexer_for_filename(path).aliases[0]
    except (ClassNotFound, IndexError):
        return "text"


def _syntax(code: str, lexer: str, *, numbers: bool = False) -> RenderableType:
    from rich.syntax import Syntax  # deferred: Pygments, when a diff is first coloured

    return Syntax(code, lexer, theme="ansi_dark", line_numbers=numbers, word_wrap=True, background_color="default")


_DIFF_STYLES = {"+": "green", "-": "red", "@": "magenta", "\\": "dim"}


class _Diff:
    """A unified diff, each line in its marker's colour; a line too long for the width goes on under its own
    `+`/`-`/` ` marker, split between words, so no row of it starts without its marker."""

    def __init__(self, diff: str) -> None:
        self.lines = diff.splitlines()

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width - 1, 1)
        for line in self.lines:
            if line.startswith(("---", "+++", "@@", "\\")) or not line:
                style = "bold" if line.startswith(("---", "+++")) else _DIFF_STYLES.get(line[:1], "")
                yield Text(line, style=style, overflow="fold")
                continue
            marker, rest = line[0], Text(line[1:], style=_DIFF_STYLES.get(line[0], ""))
            for row in rest.wrap(console, width, overflow="fold") or [Text()]:
                row.rstrip()
                yield Text.assemble((marker, _DIFF_STYLES.get(marker, "")), row)


def _folded_note(hidden: int, what: str) -> Text:
    return Text(f"… {hidden:,} more {what} not shown", style="dim italic")


def change_body(change: Change, *, fold: bool = True) -> RenderableType:
    """What a change does: the diff of an edit or write, the new content of a create, the head of a delete;
    `fold=False` shows all of it (the pager)."""
    parts: list[RenderableType] = []
    if change.kind == "create":
        content = change.text(change.after)
        shown, hidden = _fold(esc(content.removesuffix("\n")), FOLD_LINES if fold else None)
        parts.append(_syntax(shown or " ", _lexer(change.path), numbers=True) if content else
                     Text("(empty file)", style="dim"))
        if hidden:
            parts.append(_folded_note(hidden, f"lines ({len(change.after or b''):,} bytes in all)"))
    elif change.kind == "delete":
        before = change.before or b""
        lines = change.text(change.before).splitlines()
        parts.append(Text(f"deletes {len(before):,} bytes, {len(lines):,} lines", style="red"))
        if lines:
            shown, hidden = _fold(esc("\n".join(lines)), 8 if fold else None)
            parts.append(_syntax(shown, _lexer(change.path)))
            if hidden:
                parts.append(_folded_note(hidden, "lines"))
    else:
        diff = change.diff()
        shown, hidden = _fold(esc(diff.removesuffix("\n")), FOLD_LINES * 2 if fold else None)
        parts.append(_Diff(shown) if diff else Text("(no change)", style="dim"))
        if hidden:
            parts.append(_folded_note(hidden, "diff lines"))
    return Group(*parts)


def arguments_text(call: ToolCall) -> Text:
    if call.arguments is None:
        return Text.assemble(("arguments are not valid JSON: ", "red"), esc(call.raw_arguments[:_VALUE_CHARS]))
    out = Text()
    for n, (key, value) in enumerate(call.arguments.items()):
        shown = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        cut = len(shown) > _VALUE_CHARS
        out.append(("\n" if n else "") + esc(key) + ": ", style="bold")
        out.append(esc(shown[:_VALUE_CHARS]) + (" …" if cut else ""))
    return out or Text("(no arguments)", style="dim")


def call_title(call: ToolCall, index: int = 0, total: int = 0) -> Text:
    args = call.arguments or {}
    if call.name == "attempts":  # the candidate that passed the tests, offered in place of the run's changes
        return Text(esc(f"candidate {args.get('candidate', '?')} of {args.get('of', '?')}: passes the tests"),
                    style="bold")
    title = Text.assemble((esc(call.name), "bold"))
    target = target_of(call)
    if target:
        title.append(" " + esc(target), style="cyan")
    if total > 1:
        title.append(f"  ({index}/{total})", style="dim")
    return title

"""The approval question on a terminal: the call (and for a file change its diff) in a panel, then y/n/a/t/q.

Ctrl-C, Ctrl-D and anything unrecognised mean no.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from cli_agent.events import ApprovalAsked, Decision

__all__ = ["KEYS", "TerminalApprover", "parse_answer", "render_call"]

KEYS = {"y": Decision.YES, "yes": Decision.YES, "n": Decision.NO, "no": Decision.NO, "a": Decision.ALL,
        "all": Decision.ALL, "t": Decision.TOOL, "q": Decision.QUIT}


def parse_answer(text: str) -> Decision:
    return KEYS.get(text.strip().lower(), Decision.NO)


def render_call(asked: ApprovalAsked) -> Any:
    """A Rich renderable: the tool, its arguments, and the change as a diff."""
    from rich.console import Group
    from rich.panel import Panel
    from rich.syntax import Syntax
    from rich.text import Text

    from cli_agent.ui.headless import escape_for_terminal

    call, change = asked.call, asked.change
    parts: list[Any] = []
    if change is not None:
        parts.append(Text(escape_for_terminal(f"{change.kind} {change.path}  {change.summary}")))
        if change.kind == "delete":
            size = len(change.before or b"")
            head = "\n".join(change.text(change.before).splitlines()[:10])
            parts.append(Text(escape_for_terminal(f"{size:,} bytes; first lines:\n{head}")))
        else:
            parts.append(Syntax(escape_for_terminal(change.diff()) or "(no change)", "diff", word_wrap=True))
    else:
        args = json.dumps(call.arguments, ensure_ascii=False, indent=2)
        parts.append(Text(escape_for_terminal(args)))
    title = escape_for_terminal(f"{call.name}  ({asked.index}/{asked.total})")
    return Panel(Group(*parts), title=title, title_align="left")


class TerminalApprover:
    """Asks on the terminal. `read` is injectable for tests (it returns one line, or raises EOFError)."""

    def __init__(self, console: Any = None, read: Callable[[str], str] | None = None) -> None:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        self.console = console
        self.read = read or input

    def __call__(self, asked: ApprovalAsked) -> Decision:
        self.console.print(render_call(asked))
        rest = asked.total - asked.index
        more = f" (and the {rest} more of this turn)" if rest else ""
        question = (f"Apply? [y]es / [n]o / [a]ll: this{more} and every later change this session / "
                    f"[t]ool: every {asked.call.name} this session / [q]uit turn > ")
        try:
            return parse_answer(self.read(question))
        except (KeyboardInterrupt, EOFError):
            self.console.print("no")
            return Decision.NO

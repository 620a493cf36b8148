"""The approval question on a terminal: the call in a panel (with its diff), what each answer grants, one key.

    y  yes, this call
    n  no: the turn stops here and the model is not asked again this turn
    a  all: this call, the rest of this turn, and every later change this session
    t  this tool: every later call of this tool this session
    q  quit: abort the turn

Ctrl-C, Ctrl-D, Enter and any other key mean no. Keys typed while the model was working are thrown away before
asking, so typing ahead can never answer the question.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from rich.text import Text

from cli_agent.events import ApprovalAsked, Decision
from cli_agent.ui.escape import escape_for_terminal as esc
from cli_agent.ui.render import call_panel

__all__ = ["KEYS", "TerminalApprover", "choices", "flush_typeahead", "parse_answer", "read_key", "render_call"]

KEYS = {"y": Decision.YES, "yes": Decision.YES, "n": Decision.NO, "no": Decision.NO, "a": Decision.ALL,
        "all": Decision.ALL, "t": Decision.TOOL, "tool": Decision.TOOL, "q": Decision.QUIT, "quit": Decision.QUIT}
PROMPT = "Apply? [y/n/a/t/q] "
_SAID = {Decision.YES: "yes", Decision.NO: "no, the turn stops", Decision.ALL: "yes to all, for this session",
         Decision.TOOL: "yes to this tool, for this session", Decision.QUIT: "quit: the turn is aborted"}


def parse_answer(text: str) -> Decision:
    """An answer to the question; anything unrecognised is no."""
    return KEYS.get(text.strip().lower(), Decision.NO)


def render_call(asked: ApprovalAsked) -> Any:
    """The call of an approval question as a panel (kept for callers that print it themselves)."""
    return call_panel(asked.call, asked.change, index=asked.index, total=asked.total, about=asked.about)


def choices(asked: ApprovalAsked) -> Text:
    """What each answer does, said exactly: "all" grants more than this call, and says how much."""
    tool = esc(asked.call.name)
    rest = asked.total - asked.index
    if rest:
        everything = (f"approve all {rest + 1}? this call, the {rest} after it in this turn, and every later "
                      "change this session")
    else:
        everything = "this call and every later change this session, without asking"
    out = Text()
    for key, text in (("y", "yes   "), ("n", "no, the turn stops   "), ("q", "quit the turn")):
        out.append(f"  {key} ", style="bold cyan")
        out.append(text)
    out.append("   (Ctrl-C, Enter or any other key: no)", style="dim")
    out.append("\n  a ", style="bold cyan")
    out.append(everything)
    out.append("\n  t ", style="bold cyan")
    out.append(f"this and every later {tool} call this session, without asking")
    return out


def flush_typeahead(stream: Any = None) -> None:
    """Discard keys typed before the question was asked (a terminal only)."""
    stream = stream or sys.stdin
    try:
        import termios

        if stream.isatty():
            termios.tcflush(stream.fileno(), termios.TCIFLUSH)
    except (ImportError, OSError, ValueError, AttributeError):
        pass


class SignalInterrupt(KeyboardInterrupt):
    """SIGINT arrived from outside while the question waited (Ctrl-C typed at it is a key, and means no)."""


def read_key(message: str, *, input: Any = None, output: Any = None) -> str:
    """One key press, without Enter; "" for Ctrl-C or Ctrl-D."""
    from prompt_toolkit.application import Application
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    bindings = KeyBindings()

    @bindings.add("<any>")
    def _key(event: Any) -> None:
        event.app.exit(result=event.key_sequence[0].data)

    @bindings.add("c-c")
    @bindings.add("c-d")
    def _no(event: Any) -> None:
        event.app.exit(result="")

    @bindings.add("<sigint>")
    def _signal(event: Any) -> None:  # a SIGINT sent to the process, not a key: the run is interrupted (130)
        event.app.exit(exception=SignalInterrupt())

    app: Application[str] = Application(layout=Layout(Window(FormattedTextControl(message), height=1)),
                                        key_bindings=bindings, input=input, output=output, full_screen=False)
    return app.run() or ""


def _ask_terminal(message: str) -> str:
    flush_typeahead()
    return read_key(message)


class TerminalApprover:
    """Asks on the terminal. `read(prompt)` returns the answer (one key or a word) or raises EOFError /
    KeyboardInterrupt; it is injectable for tests. `show_panel=False` when the front end already drew the call."""

    def __init__(self, console: Any = None, read: Callable[[str], str] | None = None, *,
                 show_panel: bool = True) -> None:
        if console is None:
            from rich.console import Console

            console = Console(stderr=True)
        self.console = console
        self.read = read or _ask_terminal
        self.show_panel = show_panel

    def __call__(self, asked: ApprovalAsked) -> Decision:
        if self.show_panel:
            self.console.print(render_call(asked))
        self.console.print(choices(asked))
        try:
            answer = self.read(PROMPT)
        except SignalInterrupt:
            raise
        except (KeyboardInterrupt, EOFError):  # Ctrl-C or Ctrl-D typed at the question: no
            answer = ""
        decision = parse_answer(answer)
        key = answer.strip()
        unrecognised = decision is Decision.NO and key.lower() not in KEYS
        said = Text.assemble(("  → ", "dim"), (_SAID[decision], "bold green" if decision.approves else "bold yellow"))
        if unrecognised:
            said.append(f"  ({esc(key)!r} is not an answer)" if key.isprintable() and key else "", style="dim")
        self.console.print(said)
        return decision

"""An arrow-key picker: a list to move through with ↑/↓ (or k/j, or a number), Enter to choose, Esc or Ctrl-C to
leave; an optional preview of the highlighted entry under the list. It draws below the prompt and is erased when
done, so only the line saying what was chosen stays.

    index = pick("Resume which session?", ["a", "b"], preview=lambda i: f"details of {i}")  # None: nothing chosen
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from prompt_toolkit.application import Application, get_app
from prompt_toolkit.formatted_text import FormattedText
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.layout import FormattedTextControl, HSplit, Layout, Window

SHOWN = 10  # rows of the list on screen at once


def pick(title: str, options: Sequence[str], *, preview: Callable[[int], str] | None = None, selected: int = 0,
         input: Any = None, output: Any = None) -> int | None:
    """The index chosen, or None (Esc, Ctrl-C, Ctrl-D, or no options)."""
    if not options:
        return None

    state: dict[str, Any] = {"at": max(0, min(selected, len(options) - 1)), "typed": ""}
    bindings = KeyBindings()

    def move(step: int) -> None:
        state["at"] = (state["at"] + step) % len(options)
        state["typed"] = ""

    @bindings.add("up")
    @bindings.add("k")
    @bindings.add("c-p")
    def _up(event: Any) -> None:
        move(-1)

    @bindings.add("down")
    @bindings.add("j")
    @bindings.add("c-n")
    def _down(event: Any) -> None:
        move(1)

    @bindings.add("enter")
    def _choose(event: Any) -> None:
        event.app.exit(result=state["at"])

    @bindings.add("escape", eager=True)
    @bindings.add("c-c")
    @bindings.add("c-d")
    @bindings.add("q")
    def _leave(event: Any) -> None:
        event.app.exit(result=None)

    for digit in "0123456789":
        @bindings.add(digit)
        def _number(event: Any, digit: str = digit) -> None:
            typed = state["typed"] + digit
            if typed.isdigit() and 1 <= int(typed) <= len(options):
                state["at"], state["typed"] = int(typed) - 1, typed if int(typed) * 10 <= len(options) else ""

    def rows() -> FormattedText:
        at = state["at"]
        first = min(max(0, at - SHOWN // 2), max(0, len(options) - SHOWN))
        parts: list[tuple[str, str]] = [("bold", title), ("", "\n")]
        width = _columns()
        for i in range(first, min(first + SHOWN, len(options))):
            mark, style = ("❯ ", "reverse") if i == at else ("  ", "")
            lines = textwrap.wrap(f"{i + 1:>2}. {options[i]}", max(width - 3, 20), subsequent_indent="    ",
                                  break_on_hyphens=False) or [""]
            parts += [("ansicyan", mark), (style, lines[0]), ("", "\n")]
            for line in lines[1:]:  # a long entry wraps between words under itself
                parts += [("", "  "), (style, line), ("", "\n")]
        if len(options) > SHOWN:
            parts.append(("ansibrightblack", f"  ({len(options)} in all)\n"))
        parts.append(("ansibrightblack", "↑/↓ move · Enter choose · Esc leave"))
        return FormattedText(parts)

    def details() -> FormattedText:  # wrapped between words, each line's rest under it (the window cuts a word)
        text = preview(state["at"]) if preview else ""
        width = max(_columns() - 1, 20)
        lines = [part for line in text.split("\n") for part in textwrap.wrap(
            line, width, subsequent_indent="  ", break_on_hyphens=False) or [""]]
        return FormattedText([("ansibrightblack", "\n".join(lines))])

    body: list[Any] = [Window(FormattedTextControl(rows), wrap_lines=True, dont_extend_height=True)]
    if preview is not None:
        body.append(Window(FormattedTextControl(details), wrap_lines=True, dont_extend_height=True))
    app: Application[int | None] = Application(layout=Layout(HSplit(body)), key_bindings=bindings, input=input,
                                               output=output, full_screen=False, erase_when_done=True)
    return app.run()


def _columns() -> int:
    try:
        return get_app().output.get_size().columns
    except Exception:  # no terminal size known: the usual width
        return 80

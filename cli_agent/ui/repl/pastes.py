"""Long pastes at the REPL's prompt, folded: a paste of `FOLD_LINES` lines or more goes into the input as
`[Pasted text #1 +122 lines]`, so what was typed around it stays in view, and Ctrl-O puts the text itself back in
the input. The line sent to the model has every fold expanded; the transcript keeps the folded line."""

from __future__ import annotations

import re
from typing import Any

from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.keys import Keys

FOLD_LINES = 10
_FOLD = re.compile(r"\[Pasted text #(\d+) \+\d+ lines\]")


class Pastes:
    """The session's folded pastes, by number."""

    def __init__(self) -> None:
        self.texts: dict[int, str] = {}

    def fold(self, text: str) -> str:
        """`text` as it goes into the input: itself when short, else its fold (kept to expand)."""
        text = text.replace("\r\n", "\n").replace("\r", "\n")
        lines = len(text.rstrip("\n").split("\n"))
        if lines < FOLD_LINES:
            return text
        number = len(self.texts) + 1
        self.texts[number] = text.rstrip("\n")
        return f"[Pasted text #{number} +{lines} lines]"

    def expand(self, line: str) -> str:
        """`line` with each fold replaced by its text (an unknown number stays as it is)."""
        return _FOLD.sub(lambda m: self.texts.get(int(m.group(1)), m.group(0)), line)

    def folded(self, line: str) -> list[int]:
        return [int(m.group(1)) for m in _FOLD.finditer(line) if int(m.group(1)) in self.texts]

    def bindings(self) -> Any:
        """A bracketed paste folded when long; Ctrl-O expands the folds in the input."""
        bindings = KeyBindings()

        @bindings.add(Keys.BracketedPaste)
        def _paste(event: Any) -> None:
            event.current_buffer.insert_text(self.fold(event.data))

        @bindings.add("c-o")
        def _expand(event: Any) -> None:
            buffer = event.current_buffer
            expanded = self.expand(buffer.text)
            if expanded != buffer.text:
                buffer.text = expanded
                buffer.cursor_position = len(expanded)

        return bindings

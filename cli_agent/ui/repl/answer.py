"""How the REPL's yes/no questions are answered: one key, no Enter (the folder's trust, the model offered at first
start, `!COMMAND`'s "attach the output?", `/facts`, a new conversation for `/model`), as the approval question is.

Keys typed before a question is drawn never answer it: they are taken off the terminal first (`take_typed`) and
kept for the prompt, a line finished with Enter to be sent as the next message, an unfinished one to go on being
typed (`Typed`).

    typed = Typed()
    answer = ask_key("Trust this folder? [y/N] ", typed)   # "y", "n", "\\r" (Enter), "" for Ctrl-C or Ctrl-D
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import termios
from dataclasses import field
from typing import Any

from cli_agent.contracts import dataclass
from cli_agent.ui.repl.keys import TurnKeys
from cli_agent.ui.view import SignalInterrupt, read_key


@dataclass
class Typed:
    """Keys typed ahead of a question: finished lines (`queued`) and the line being typed (`partial`)."""

    queued: list[str] = field(default_factory=list)
    partial: str = ""

    def add(self, more: Typed) -> None:
        if more.queued:
            self.queued += [self.partial + more.queued[0], *more.queued[1:]]
            self.partial = more.partial
        else:
            self.partial += more.partial


def take_typed(stream: Any = None) -> Typed:
    """What was typed at the terminal and not read yet, read without waiting (echo off meanwhile): nothing when
    `stream` (stdin) is not a terminal."""
    try:
        fd = (stream or sys.stdin).fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (AttributeError, OSError, ValueError):
        return Typed()
    if saved is None:
        return Typed()
    raw = list(saved)
    raw[3] = saved[3] & ~(termios.ICANON | termios.ECHO | termios.ECHONL)  # the pending line becomes readable
    data = b""
    try:
        termios.tcsetattr(fd, termios.TCSANOW, raw)
        while select.select([fd], [], [], 0)[0] and len(data) < 65_536:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            data += chunk
    except (OSError, termios.error):
        pass
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)
    keys = TurnKeys(fd, interrupt=lambda: None)
    keys.feed(data)
    return Typed(keys.queued, keys.partial)


def ask_key(message: Any, typed: Typed | None = None, *, input: Any = None, output: Any = None,
            answers: str = "yn") -> str:
    """One key answers `message` (lower-cased; "\\r" for Enter, "" for Ctrl-C or Ctrl-D); what was typed before it
    was drawn goes into `typed` instead of answering it. With `typed`, a printable key other than `answers` (y and
    n) answers nothing: it starts a line that goes into `typed` too, for the prompt (a sentence typed at a question
    is kept)."""
    ahead = take_typed(input)
    if typed is not None:
        typed.add(ahead)
    kept: list[str] = []
    try:
        return read_key(message, answers=answers if typed is not None else None, kept=kept, input=input,
                        output=output).lower()
    except SignalInterrupt:
        raise
    except (KeyboardInterrupt, EOFError):
        return ""
    finally:
        if typed is not None and kept:
            typed.add(Typed(partial=" ".join(kept)))

"""What a terminal shows: a pyte screen (with its scrollback) fed everything a pexpect child prints, so a test can
check the picture a person sees (a line drawn once, wrapped inside its margin) instead of the raw byte stream."""

from __future__ import annotations

import pyte


class Screen:
    """Attach to a pexpect child (`Screen(child, cols)`); `lines()` is the scrollback and the screen, top to bottom."""

    def __init__(self, child, cols: int, rows: int = 40) -> None:
        self.cols = cols
        self.screen = pyte.HistoryScreen(cols, rows, history=10_000)
        self.stream = pyte.Stream(self.screen)
        child.logfile_read = self

    def write(self, text: str) -> None:
        self.stream.feed(text)

    def flush(self) -> None:
        pass

    def lines(self) -> list[str]:
        above = ["".join(row[x].data for x in range(self.cols)).rstrip() for row in self.screen.history.top]
        return above + [line.rstrip() for line in self.screen.display]

    def text(self) -> str:
        return "\n".join(self.lines())

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

    def wait_until(self, child, holds, timeout: float = 60) -> bool:
        """Feed the screen until `holds()` (or the timeout, or the child's end); whether it holds."""
        import time

        import pexpect

        deadline = time.monotonic() + timeout
        while not holds() and time.monotonic() < deadline:
            try:
                child.expect(pexpect.TIMEOUT, timeout=0.1)
            except pexpect.EOF:
                break
        return bool(holds())

    def wait_for(self, child, text: str, timeout: float = 60) -> str:
        """The screen once it shows `text`: prompt_toolkit redraws only the cells that change, so the raw stream of a
        redrawn picker need not hold the words it shows. AssertionError with the screen if not."""
        assert self.wait_until(child, lambda: text in self.text(), timeout), self.text()[-3000:]
        return self.text()


class Terms:
    """REPLs started in pseudo-terminals for one test, each with its screen, and ended with the test:

        with Terms(tmp_path) as terms:
            t, screen = terms.start(replies, cols)      # at its prompt; config= writes the user config first
    """

    def __init__(self, tmp_path) -> None:
        self.tmp_path = tmp_path
        self.started: list = []

    def start(self, replies, cols: int, config: str | None = None, **kw):
        from termkit import PROMPT, Term

        if config is not None:
            (self.tmp_path / "home" / "config").mkdir(parents=True, exist_ok=True)
            (self.tmp_path / "home" / "config" / "config.toml").write_text(config)
        self.started.append(Term(self.tmp_path, replies, cols=cols, wait=None, **kw))
        screen = Screen(self.started[-1].child, cols)
        self.started[-1].expect(PROMPT)
        return self.started[-1], screen

    def __enter__(self) -> Terms:
        return self

    def __exit__(self, *exc: object) -> None:
        for t in self.started:
            if t.child.isalive():
                t.child.terminate(force=True)

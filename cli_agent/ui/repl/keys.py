"""The keyboard while a turn runs: Esc interrupts it, and what is typed meanwhile is kept, shown and sent next.

    with TurnKeys.open(on_change=renderer.refresh) as keys:   # None-like when stdin is not a terminal
        ... drive the turn; keys.paused() around an approval question ...
    keys.queued, keys.partial   # whole lines typed (Enter) to send next; the unfinished line for the next prompt

The terminal is put in cbreak mode without echo (Ctrl-C still sends SIGINT); a reader thread takes the bytes. A lone
Esc sends SIGINT to the main thread, so an Esc is handled exactly like Ctrl-C (the loop finishes the run cleanly).
Shift+Tab calls `on_shift_tab`; other escape sequences (arrows, function keys) are ignored; Backspace, Ctrl-U and
Enter edit the typed-ahead text.

`no_echo()` holds the keys outside a turn while the REPL prints (the start-up, a resumed transcript, a command, the
wait before a turn): what is typed is not echoed into the output but kept, line-buffered, for the turn's reader or
the next prompt.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import select
import signal
import sys
import termios
import threading
import tty
from collections.abc import Callable, Iterator
from typing import Any

ESC_WAIT_S = 0.05  # after \x1b, how long to wait for the rest of an escape sequence
_POLL_S = 0.05


class TurnKeys:
    """Reads the terminal in a thread while a turn runs (see the module docstring)."""

    def __init__(self, fd: int, on_change: Callable[[], None] = lambda: None,
                 interrupt: Callable[[], None] | None = None, on_shift_tab: Callable[[], None] | None = None) -> None:
        self.fd = fd
        self.on_change = on_change
        self.on_shift_tab = on_shift_tab
        self.interrupt = interrupt or _interrupt_main
        self.queued: list[str] = []
        self.partial = ""
        self.escaped = False
        self._saved: Any = None
        self._stop = threading.Event()
        self._lock = threading.Lock()  # held while reading; `paused()` takes it so no key is read meanwhile
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._thread: threading.Thread | None = None

    @classmethod
    @contextlib.contextmanager
    def open(cls, on_change: Callable[[], None] = lambda: None,
             on_shift_tab: Callable[[], None] | None = None, partial: str = "") -> Iterator[TurnKeys | None]:
        """Reading keys for the length of the block; None when stdin is not a terminal. `on_shift_tab`: called for
        Shift+Tab (the REPL's next approval mode, for the calls still to come); `partial`: a line being typed,
        which the keys read go on with (set before reading starts, so keys typed before the block are kept)."""
        try:
            fd = sys.stdin.fileno()
            usable = os.isatty(fd)
        except (AttributeError, OSError, ValueError):
            usable = False
        if not usable:
            yield None
            return
        keys = cls(fd, on_change, on_shift_tab=on_shift_tab)
        keys.partial = partial
        keys.start()
        try:
            yield keys
        finally:
            keys.stop()

    def shown(self) -> list[str]:
        """The lines to show under the spinner: the queued ones, then the one being typed."""
        return [*self.queued, self.partial + "▏"] if self.partial or self.queued else []

    def start(self) -> None:
        with contextlib.suppress(termios.error):
            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd, termios.TCSANOW)
        self._thread = threading.Thread(target=self._read, name="turn-keys", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(1.0)
        self._restore()

    def _restore(self) -> None:
        if self._saved is not None:
            with contextlib.suppress(termios.error):
                termios.tcsetattr(self.fd, termios.TCSANOW, self._saved)

    @contextlib.contextmanager
    def paused(self) -> Iterator[None]:
        """No key is read in the block (an approval question reads them itself), and the terminal is as it was."""
        with self._lock:
            self._restore()
            try:
                yield
            finally:
                with contextlib.suppress(termios.error):
                    tty.setcbreak(self.fd, termios.TCSANOW)

    def _read(self) -> None:
        while not self._stop.is_set():
            with self._lock:
                try:
                    ready, _, _ = select.select([self.fd], [], [], _POLL_S)
                    data = os.read(self.fd, 1024) if ready else b""
                    if data.endswith(b"\x1b"):  # a lone Esc, or the start of a sequence still arriving
                        more, _, _ = select.select([self.fd], [], [], ESC_WAIT_S)
                        if more:
                            data += os.read(self.fd, 1024)
                except OSError:
                    return
            if data:
                self.feed(data)

    def feed(self, data: bytes) -> None:
        """Take bytes typed at the terminal."""
        text = self._decoder.decode(data)
        changed = False
        i = 0
        while i < len(text):
            ch = text[i]
            if ch == "\x1b":
                if i + 1 == len(text):  # a lone Esc
                    self.escaped = True
                    self.interrupt()
                    return
                end = _skip_sequence(text, i)
                if text[i:end] == "\x1b[Z" and self.on_shift_tab is not None:  # Shift+Tab
                    self.on_shift_tab()
                    changed = True
                i = end
                continue
            if ch in "\r\n":
                if self.partial.strip():
                    self.queued.append(self.partial)
                self.partial = ""
            elif ch in "\x7f\x08":
                self.partial = self.partial[:-1]
            elif ch == "\x15":  # Ctrl-U
                self.partial = ""
            elif ch.isprintable() or ch == "\t":
                self.partial += " " if ch == "\t" else ch
            i += 1
            changed = True
        if changed:
            self.on_change()


@contextlib.contextmanager
def no_echo(stream: Any = None) -> Iterator[None]:
    """The terminal does not echo keys in the block (they stay in its input, unread); as it was afterwards. Nothing
    when `stream` (stdin) is not a terminal."""
    try:
        fd = (stream or sys.stdin).fileno()
        saved = termios.tcgetattr(fd) if os.isatty(fd) else None
    except (AttributeError, OSError, ValueError):
        saved = None
    if saved is None:
        yield
        return
    quiet = list(saved)
    quiet[3] = saved[3] & ~(termios.ECHO | termios.ECHONL)  # lflags: no echo; the line discipline stays as it was
    with contextlib.suppress(termios.error):
        termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


def _skip_sequence(text: str, i: int) -> int:
    """The index after the escape sequence starting at `i` (CSI `ESC [ ... final`, SS3 `ESC O x`, or ESC x)."""
    if i + 1 < len(text) and text[i + 1] == "[":
        j = i + 2
        while j < len(text) and not ("@" <= text[j] <= "~"):
            j += 1
        return j + 1
    return i + 3 if i + 1 < len(text) and text[i + 1] == "O" else i + 2


def _interrupt_main() -> None:
    signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGINT)

"""A broken MCP server said at start-up: the servers connect in the background (the prompt never waits for them),
and once one fails its note is printed above the prompt, without waiting for the first turn.

A watcher thread looks every `POLL_S` while a server is still connecting (at most the servers' start-up limit);
a failure found while the prompt is up is printed above it (prompt_toolkit's `run_in_terminal`), and one found
while a turn or a command runs is left to the turn, which says it. Either way it is said once.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from prompt_toolkit.application import run_in_terminal
from prompt_toolkit.application.current import set_app

POLL_S = 0.2


def watch_failures(attached: Any, app: Callable[[], Any], say: Callable[[list[str]], None]) -> threading.Thread:
    """Watch `attached` (an McpAttachment) in a daemon thread; `app()` is the prompt's Application (None before
    there is one); `say(notes)` prints the notes (called on the prompt's loop, with the prompt out of the way)."""
    deadline = time.monotonic() + attached.hub.start_limit()

    def above_the_prompt(application: Any) -> None:  # on the prompt's event loop

        if not application.is_running:  # the line was sent meanwhile: the turn says it
            return
        notes = attached.failures()
        if notes:
            with set_app(application):
                run_in_terminal(lambda: say(notes))

    def watch() -> None:
        while time.monotonic() < deadline:
            if attached.unreported():
                application = app()
                loop = getattr(application, "loop", None) if application is not None else None
                if loop is not None and application.is_running:
                    loop.call_soon_threadsafe(above_the_prompt, application)
            elif not attached.starting():
                return
            time.sleep(POLL_S)

    thread = threading.Thread(target=watch, name="mcp-failures", daemon=True)
    thread.start()
    return thread

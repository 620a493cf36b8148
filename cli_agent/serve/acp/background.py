"""A session's background processes as ACP tool calls: the `run_command` call that started one stays in progress,
its content the tail of the process's output as it arrives, and ends completed (exit 0) or failed when the process
ends, is stopped, or the session ends. A thread of the feed's own follows them, after the turn that started them
has answered; it ends when none is left to follow.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from typing import TYPE_CHECKING, Any

from acp import schema

from cli_agent.serve.acp import updates

if TYPE_CHECKING:
    from cli_agent.sandbox import Process, Processes

_log = logging.getLogger("cli_agent.serve.acp")
POLL_S = 0.25
TAIL_BYTES = 8192  # the tail of its output a process's tool call shows
_SEND_TIMEOUT = 30.0


class ProcessFeed:
    """One per session: `follow(call_id, number)` once a call started process `number` in the background."""

    def __init__(self, session_id: str, client: Any, loop: asyncio.AbstractEventLoop, processes: Processes) -> None:
        self.session_id, self.client, self.loop, self.processes = session_id, client, loop, processes
        self._followed: dict[str, tuple[Process, int]] = {}  # call id -> the process, the output bytes shown
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def follow(self, call_id: str, number: int) -> None:
        try:
            process = self.processes.get(number)
        except Exception:  # gone already (stopped in the same turn): its result said so
            return
        with self._lock:
            self._followed[call_id] = (process, process.ring.total)
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._watch, name=f"acp-processes-{self.session_id[:8]}",
                                                daemon=True)
                self._thread.start()

    def _watch(self) -> None:
        while True:
            with self._lock:
                followed = dict(self._followed)
                if not followed:
                    self._thread = None
                    return
            for call_id, (process, shown) in followed.items():
                running, total = process.running, process.ring.total
                if total != shown or not running:
                    self._post(progress(call_id, process, running))
                with self._lock:
                    if running:
                        self._followed[call_id] = (process, total)
                    else:
                        self._followed.pop(call_id, None)
            time.sleep(POLL_S)

    def _post(self, update: Any) -> None:
        try:
            asyncio.run_coroutine_threadsafe(self.client.session_update(session_id=self.session_id, update=update),
                                             self.loop).result(timeout=_SEND_TIMEOUT)
        except Exception as exc:  # the client is gone: nothing more to show
            _log.warning("a background process's update was not sent: %s", exc)


def progress(call_id: str, process: Process, running: bool) -> schema.ToolCallProgress:
    """The process's tool call: its output's tail; once it ended, its exit code and completed or failed."""
    with process.ring.lock:
        tail = bytes(process.ring.data[-TAIL_BYTES:]).decode("utf-8", errors="replace")
    code = process.exit_code
    text = updates.fenced(tail) + ("" if running else f"\nprocess {process.number} ended, exit code {code}")
    status: updates.Status = "in_progress" if running else "completed" if code == 0 else "failed"
    return schema.ToolCallProgress(session_update="tool_call_update", tool_call_id=call_id, status=status,
                                   content=[updates._text(text)])

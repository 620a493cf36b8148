"""Waiting for a model's reply without waiting too long: the run's deadline (`deadline_of`, `expired`), the worker
threads that read a stream so the caller can stop waiting (`iterate_until`), and the cancel of an editor's turn
(`cancelled_by`, `raise_if_cancelled`)."""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from collections.abc import Callable, Generator, Iterable, Iterator
from typing import Any, TypeVar

from cli_agent.contracts import RunTimeoutError

__all__ = ["cancelled_by"]

T = TypeVar("T")


def deadline_of(timeout_s: float | None) -> float | None:
    return None if timeout_s is None else time.monotonic() + max(0.0, timeout_s)


def expired(deadline: float | None, slack: float = 0.05) -> bool:
    return deadline is not None and time.monotonic() >= deadline - slack


def timeout_error(timeout_s: float | None, where: str) -> RunTimeoutError:
    return RunTimeoutError(f"the run's time budget ran out ({timeout_s:g}s) waiting for {where}")


class _Workers:
    """Daemon threads kept for the next request: a request takes an idle one, or starts one only when all are busy
    (a stalled server still holding one). No thread is started per request once the session has one."""

    def __init__(self) -> None:
        self._idle: queue.SimpleQueue[queue.SimpleQueue[Callable[[], None]]] = queue.SimpleQueue()

    def run(self, job: Callable[[], None]) -> None:
        try:
            inbox = self._idle.get_nowait()
        except queue.Empty:
            inbox = queue.SimpleQueue()
            threading.Thread(target=self._serve, args=(inbox,), name="provider-stream", daemon=True).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            inbox.get()()
            self._idle.put(inbox)


_WORKERS = _Workers()
_CANCEL = threading.local()  # the flag that gives up a reply awaited in this thread (`cancelled_by`)
_CANCEL_POLL_S = 0.05


@contextlib.contextmanager
def cancelled_by(flag: threading.Event) -> Iterator[None]:
    """Inside: a reply awaited in this thread (a thread that no signal reaches, as an editor's turn) is given up as
    soon as `flag` is set, with the KeyboardInterrupt that Esc raises in the REPL; the request is left to end in its
    worker thread."""
    previous = getattr(_CANCEL, "flag", None)
    _CANCEL.flag = flag
    try:
        yield
    finally:
        _CANCEL.flag = previous


def raise_if_cancelled() -> None:
    """The KeyboardInterrupt of a cancel (`cancelled_by`) for a wait that polls (a model server loading)."""
    if getattr(_CANCEL, "flag", None) is not None and _CANCEL.flag.is_set():
        raise KeyboardInterrupt


def iterate_until(produce: Callable[[], Iterable[T]], deadline: float | None,
                  on_expiry: Callable[[], BaseException], *, in_thread: bool = False) -> Generator[T, None, None]:
    """Iterate `produce()` but never wait past `deadline`, nor past a cancel (`cancelled_by`): the blocking reads run
    in a daemon thread and the caller waits on a queue, so a stalled server costs no more than the budget (the
    thread ends on its own socket timeout). Without a deadline or a cancel flag the iterable is consumed in place,
    unless `in_thread`."""
    flag: threading.Event | None = getattr(_CANCEL, "flag", None)
    if deadline is None and not in_thread and flag is None:
        yield from produce()
        return
    items: queue.Queue[tuple[str, Any]] = queue.Queue()
    stop = threading.Event()

    def work() -> None:
        iterator: Iterator[T] | None = None
        try:
            iterator = iter(produce())
            for item in iterator:
                items.put(("item", item))
                if stop.is_set():
                    break
            items.put(("end", None))
        except BaseException as exc:
            items.put(("error", exc))
        finally:
            with contextlib.suppress(Exception):
                getattr(iterator, "close", lambda: None)()

    _WORKERS.run(work)
    try:
        while True:
            wait = None if deadline is None else max(0.0, deadline - time.monotonic())
            if flag is not None:
                raise_if_cancelled()
                wait = _CANCEL_POLL_S if wait is None else min(wait, _CANCEL_POLL_S)
            try:
                kind, value = items.get(timeout=wait)
            except queue.Empty:
                if flag is not None and not expired(deadline, slack=0):
                    continue
                raise on_expiry() from None
            if kind == "end":
                return
            if kind == "error":
                raise value
            yield value
    finally:
        stop.set()

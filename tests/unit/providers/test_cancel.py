"""A cancel from a thread no signal reaches (an editor's turn, `cancelled_by`): a reply awaited there is given up
at once with the KeyboardInterrupt the REPL's Esc raises, whether the server is slow to answer or the bundled
model is still loading; without a cancel the wait is as before."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from cli_agent.providers.waiting import cancelled_by, iterate_until, timeout_error


def slow() -> Iterator[int]:
    time.sleep(30)  # a server that takes its time: the worker thread is left to it
    yield 1


def test_a_cancel_gives_up_a_reply_in_flight_and_no_cancel_waits_for_it() -> None:
    flag = threading.Event()
    threading.Timer(0.2, flag.set).start()
    with cancelled_by(flag), pytest.raises(KeyboardInterrupt):
        list(iterate_until(slow, None, lambda: timeout_error(1, "x")))
    with cancelled_by(threading.Event()):
        assert list(iterate_until(lambda: iter([1, 2]), None, lambda: timeout_error(1, "x"))) == [1, 2]
        with pytest.raises(Exception, match="time budget ran out"):
            list(iterate_until(slow, time.monotonic() + 0.2, lambda: timeout_error(0.2, "the server")))


@pytest.mark.slow
def test_a_cancel_gives_up_waiting_for_the_bundled_model_to_load() -> None:
    from cli_agent.providers.local.model import CATALOG, model_path
    from cli_agent.providers.local.runtime import runtime_version
    from cli_agent.providers.local.server import LlamaServer

    try:
        assert runtime_version() is not None
        weights = model_path(CATALOG["smollm2-135m"])
    except Exception:
        pytest.skip("the 'local' extra or the SmolLM2 weight package is not installed")
    server = LlamaServer(weights, threads=1, context_size=512)
    flag = threading.Event()
    flag.set()
    try:
        with cancelled_by(flag), pytest.raises(KeyboardInterrupt):
            server.wait_ready(120)
    finally:
        server.stop()
    assert server.process is None

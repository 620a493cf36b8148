"""web_fetch has one deadline for the whole fetch (connect, status line, headers, body), never past the run's:
servers on 127.0.0.1 that drip their answer one byte at a time, where every single read would meet a per-read
timeout, are cut at the deadline, and the error says the time it really took."""

from __future__ import annotations

import re
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools.context import ToolContext
from cli_agent.tools.web.address import WebSetup
from cli_agent.tools.web.page import web_fetch

HEAD = b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nTransfer-Encoding: chunked\r\n\r\n"


@contextmanager
def dripping(answer: bytes, at: int) -> Iterator[str]:
    """A server that sends `answer[:at]` at once, then the rest one byte every 0.3 s."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def serve() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            with conn:
                conn.recv(65536)
                conn.sendall(answer[:at])
                for byte in answer[at:]:
                    if stop.wait(0.3):
                        return
                    try:
                        conn.sendall(bytes([byte]))
                    except OSError:
                        break

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/"
    finally:
        stop.set()
        thread.join()
        listener.close()


@pytest.mark.parametrize(("answer", "at"), [
    (HEAD + b"5\r\nhello\r\n0\r\n\r\n" * 50, 0),  # the status line drips
    (HEAD.replace(b"\r\n\r\n", b"\r\nX-Slow: " + b"a" * 200 + b"\r\n\r\n"), len(HEAD) - 2),  # a header drips
    (HEAD + b"5\r\nhello\r\n" + b"0" * 200 + b"5\r\nhello\r\n", len(HEAD) + 10),  # a chunk-size line drips
])
def test_a_server_that_drips_is_cut_at_the_one_deadline(tmp_path, answer, at):
    ctx = ToolContext(Workspace(tmp_path), web=WebSetup(allow_private=True, timeout_s=1.5))
    started = time.monotonic()
    with dripping(answer, at) as url, pytest.raises(ToolError, match="timed out") as refused:
        web_fetch(ctx, url)
    took = time.monotonic() - started
    assert took < 3.0
    said = float(re.search(r"after ([\d.]+) s", str(refused.value)).group(1))
    assert abs(said - took) < 0.5  # the time it really took


def test_the_runs_deadline_bounds_a_fetch_with_a_longer_limit(tmp_path):
    ctx = ToolContext(Workspace(tmp_path), web=WebSetup(allow_private=True, timeout_s=30),
                      deadline=time.monotonic() + 1.0)
    started = time.monotonic()
    with dripping(HEAD + b"5\r\nhello\r\n" * 100, 0) as url, pytest.raises(ToolError, match="timed out"):
        web_fetch(ctx, url)
    assert time.monotonic() - started < 2.5

"""The session's one network namespace: a command reaches a server a background command of the same session started
on 127.0.0.1 (as root and as an unprivileged user), the host's own loopback stays out, a session's namespace is not
another's, and its holder ends with the session."""

from __future__ import annotations

import http.server
import os
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandboxkit import run_as_nobody

from cli_agent.sandbox import NetRules, Policy, Processes, SessionNet, probe, run_in_sandbox
from cli_agent.sandbox.process import Limits

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]

FETCH = "python3 -c \"import urllib.request as u; print(u.urlopen('http://127.0.0.1:{port}/', timeout=3).read())\" 2>&1"


def _run(ws: Path, command: str, net: SessionNet) -> str:
    running = run_in_sandbox(command, probe(), Policy(workspace=ws), Limits(timeout_s=30), lambda *_: None, net=net)
    while True:
        try:
            next(running)
        except StopIteration as done:
            return str(done.value.outcome.output)


def _serving(processes: Processes, port: int) -> None:
    process = processes.start(f"python3 -m http.server {port} --bind 127.0.0.1", lambda *_: None)
    deadline = time.monotonic() + 10
    while "Serving HTTP" not in process.ring.last_line() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def host_server() -> Iterator[int]:
    """A server on the host's own 127.0.0.1."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def test_a_command_reaches_a_background_server_of_its_session_and_not_of_another(ws: Path) -> None:
    net, other = SessionNet(NetRules()), SessionNet(NetRules())
    processes = Processes(probe(), Policy(workspace=ws), net=net)
    try:
        _serving(processes, 8131)
        assert "Directory listing" in _run(ws, FETCH.format(port=8131), net)
        assert "Connection refused" in _run(ws, FETCH.format(port=8131), other)
    finally:
        processes.stop_all()
        net.close()
        other.close()


def test_the_hosts_loopback_stays_out(ws: Path, host_server: int) -> None:
    net = SessionNet(NetRules())
    try:
        assert net.joined
        output = _run(ws, FETCH.format(port=host_server), net)
        assert "Connection refused" in output and "Directory listing" not in output
        assert net.drain() == []  # it went nowhere near the proxy either
    finally:
        net.close()


def test_the_holder_ends_with_the_session(ws: Path) -> None:
    net = SessionNet(NetRules())
    assert net.joined
    holder = net._holder
    assert holder is not None and holder.popen is not None
    pid = holder.popen.pid
    net.close()
    assert not Path(f"/proc/{pid}").exists() or Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z"


UNPRIVILEGED = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from cli_agent.sandbox import NetRules, Policy, Processes, SessionNet, probe, run_in_sandbox
from cli_agent.sandbox.process import Limits
ws = Path(sys.argv[2])
net = SessionNet(NetRules())
processes = Processes(probe(), Policy(workspace=ws), net=net)
process = processes.start("python3 -m http.server 8132 --bind 127.0.0.1", lambda *_: None)
deadline = time.monotonic() + 10
while "Serving HTTP" not in process.ring.last_line() and time.monotonic() < deadline:
    time.sleep(0.05)
running = run_in_sandbox(sys.argv[3], probe(), Policy(workspace=ws), Limits(timeout_s=30), lambda *_: None, net=net)
while True:
    try:
        next(running)
    except StopIteration as done:
        print("joined" if net.joined else "apart: " + net.unshared_why, done.value.outcome.output)
        break
processes.stop_all()
net.close()
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to drop privileges")
def test_an_unprivileged_user_reaches_a_background_server_of_its_session() -> None:
    done = run_as_nobody(UNPRIVILEGED, FETCH.format(port=8132), timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("joined") and "Directory listing" in done.stdout, done.stdout

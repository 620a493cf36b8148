"""web_fetch reaches the session's own loopback: with `[web] allow_private`, a loopback URL is connected inside the
session's network namespace (the holder connects and passes the socket back), so a server a background command
started answers, before the host's server on the same port; without allow_private loopback stays refused; before
any command there is no namespace, and the refusal says so; as root and as an unprivileged user."""

from __future__ import annotations

import functools
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

from cli_agent.contracts import ToolError
from cli_agent.sandbox import NetRules, Policy, Processes, SessionNet, probe
from cli_agent.tools.web.address import WebSetup
from cli_agent.tools.web.fetch import fetch

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]

PRIVATE = WebSetup(allow_private=True, timeout_s=10)


def _serving(processes: Processes, port: int) -> None:
    process = processes.start(f"python3 -m http.server {port} --bind 127.0.0.1", lambda *_: None)
    deadline = time.monotonic() + 10
    while "Serving HTTP" not in process.ring.last_line() and time.monotonic() < deadline:
        time.sleep(0.05)


@pytest.fixture
def host_server(tmp_path: Path) -> Iterator[int]:
    """A server on the host's own 127.0.0.1, serving a page that says so."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "index.html").write_text("the host's page\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _get(url: str, net: SessionNet | None, setup: WebSetup = PRIVATE) -> str:
    return fetch(url, setup, time.monotonic() + setup.timeout_s, net).body.decode()


def test_web_fetch_reaches_a_background_server_of_the_session_before_the_hosts(ws: Path, host_server: int) -> None:
    (ws / "index.html").write_text("the session's page\n")
    net = SessionNet(NetRules())
    processes = Processes(probe(), Policy(workspace=ws), net=net)
    try:
        _serving(processes, host_server)  # the same port as the host's server: the session's own loopback
        assert _get(f"http://127.0.0.1:{host_server}/", net) == "the session's page\n"
        assert _get(f"http://localhost:{host_server}/", net) == "the session's page\n"
        with pytest.raises(ToolError, match="loopback address"):
            _get(f"http://127.0.0.1:{host_server}/", net, WebSetup(allow_private=False))
    finally:
        processes.stop_all()
        net.close()


def test_the_sessions_namespace_does_not_reach_the_hosts_loopback(ws: Path, host_server: int) -> None:
    net = SessionNet(NetRules())
    try:
        assert net.joined
        with pytest.raises(ToolError, match="Connection refused"):
            net.reach_loopback("127.0.0.1", ["127.0.0.1"], host_server, 5.0)
        # web_fetch then falls back to this machine's loopback: a dev server of the user's
        assert _get(f"http://127.0.0.1:{host_server}/", net) == "the host's page\n"
    finally:
        net.close()


def test_before_any_command_the_refusal_says_there_is_no_namespace_yet(ws: Path) -> None:
    net = SessionNet(NetRules())
    try:
        with pytest.raises(ToolError) as refused:
            _get("http://127.0.0.1:9/", net)
        said = str(refused.value)
        assert "the session has no network namespace yet" in said and "nor on this machine's loopback" in said
        assert net._holder is None  # a fetch makes no namespace
    finally:
        net.close()


def test_where_commands_do_not_share_a_namespace_the_refusal_says_why(ws: Path) -> None:
    net = SessionNet(NetRules(), shared=False)
    try:
        assert not net.joined
        with pytest.raises(ToolError, match="do not share a network namespace"):
            net.reach_loopback("127.0.0.1", ["127.0.0.1"], 9, 2.0)
    finally:
        net.close()


UNPRIVILEGED = """
import sys, time
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from cli_agent.sandbox import NetRules, Policy, Processes, SessionNet, probe
from cli_agent.tools.web.address import WebSetup
from cli_agent.tools.web.fetch import fetch
ws = Path(sys.argv[2])
(ws / "index.html").write_text("served unprivileged")
net = SessionNet(NetRules())
processes = Processes(probe(), Policy(workspace=ws), net=net)
process = processes.start("python3 -m http.server 8133 --bind 127.0.0.1", lambda *_: None)
deadline = time.monotonic() + 10
while "Serving HTTP" not in process.ring.last_line() and time.monotonic() < deadline:
    time.sleep(0.05)
page = fetch("http://127.0.0.1:8133/", WebSetup(allow_private=True), time.monotonic() + 10, net)
print("joined" if net.joined else "apart: " + net.unshared_why, page.body.decode())
processes.stop_all()
net.close()
"""


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to drop privileges")
def test_an_unprivileged_users_web_fetch_reaches_a_background_server_of_its_session() -> None:
    done = run_as_nobody(UNPRIVILEGED, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "joined served unprivileged", done.stdout

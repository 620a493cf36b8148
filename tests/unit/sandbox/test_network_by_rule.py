"""Network by rule: the address check with IPv6 forms that carry an IPv4 address, the allow rules and presets, the
proxy outside the sandbox (its own resolver, its refusals), and real commands in the sandbox fetching from a small
PEP 503 index served on a loopback address through the proxy, as root and as an unprivileged user."""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from netkit import INDEX_HOST, IndexServer, pip_download, wheel_index
from sandboxkit import run_as_nobody, run_policy

from cli_agent.sandbox import NetRules, Policy, SessionNet, probe, refusal, run_in_sandbox
from cli_agent.sandbox.process import Limits


@pytest.mark.parametrize(("address", "refused"), [
    ("64:ff9b::a9fe:a9fe", True),  # NAT64 of 169.254.169.254
    ("64:ff9b::7f00:1", True),  # NAT64 of 127.0.0.1
    ("64:ff9b::a00:1", True),  # NAT64 of 10.0.0.1
    ("2002:a9fe:a9fe::1", True),  # 6to4 of 169.254.169.254
    ("2002:c0a8:101::1", True),  # 6to4 of 192.168.1.1
    ("::127.0.0.1", True),  # IPv4-compatible
    ("::169.254.169.254", True),
    ("::ffff:0:a9fe:a9fe", True),  # IPv4-translated
    ("::ffff:127.0.0.1", True),  # IPv4-mapped
    ("64:ff9b::808:808", False),  # NAT64 of 8.8.8.8: public
    ("2002:808:808::1", False),  # 6to4 of 8.8.8.8
    ("2606:4700::1111", False),
])
def test_ipv6_forms_that_carry_a_private_ipv4_address_are_refused(address: str, refused: bool) -> None:
    assert (refusal(address, False) is not None) is refused
    if (refused and "a9fe" in address) or "169.254" in address:
        assert "link-local" in str(refusal(address, True))  # never, even where private addresses are allowed


@pytest.mark.parametrize(("rules", "host", "port", "allowed"), [
    (NetRules(("pypi.org",)), "pypi.org", 443, "pypi.org"),
    (NetRules(("pypi.org",)), "pypi.org", 8443, None),  # no port in a rule: 80 and 443 only
    (NetRules(("pypi.org",)), "evilpypi.org", 443, None),
    (NetRules(("*.pythonhosted.org",)), "files.pythonhosted.org", 443, "*.pythonhosted.org"),
    (NetRules(("*.pythonhosted.org",)), "pythonhosted.org", 443, None),
    (NetRules(("*.pythonhosted.org",)), "files.pythonhosted.org.evil.com", 443, None),
    (NetRules(("localhost:3141",)), "localhost", 3141, "localhost:3141"),
    (NetRules(("localhost:3141",)), "localhost", 3142, None),
    (NetRules((), ("python",)), "files.pythonhosted.org", 443, "preset python"),
    (NetRules((), ("rust",)), "index.crates.io", 443, "preset rust"),
    (NetRules(), "pypi.org", 443, None),  # the defaults allow nothing
])
def test_a_rule_names_a_host_or_host_and_port(rules: NetRules, host: str, port: int, allowed: str | None) -> None:
    assert rules.allows(host, port) == allowed


def _ask_proxy(net: SessionNet, request: bytes) -> bytes:
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(10)
        sock.connect(net.start())
        sock.sendall(request)
        return sock.recv(4096)


def test_a_name_that_resolves_to_loopback_or_link_local_is_refused_unless_a_rule_names_the_address() -> None:
    server = IndexServer(Path(tempfile.mkdtemp()), "127.0.0.1")
    names = {"mirror.test": "127.0.0.1", "meta.test": "169.254.169.254"}
    net = SessionNet(NetRules((f"mirror.test:{server.port}", "meta.test")),
                     resolve=lambda host, _port: [(socket.AF_INET, names[host])])
    try:
        assert _ask_proxy(net, b"CONNECT meta.test:80 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        assert _ask_proxy(net, b"CONNECT mirror.test:%d HTTP/1.1\r\n\r\n" % server.port).startswith(b"HTTP/1.1 403")
        assert _ask_proxy(net, b"CONNECT other.test:443 HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 403")
        log = net.drain()
        assert [c.allowed for c in log] == [False, False, False]
        assert "meta.test resolves to 169.254.169.254" in log[0].why and "link-local" in log[0].why
        assert "mirror.test resolves to 127.0.0.1" in log[1].why
        assert '[sandbox.network] allow = ["other.test"]' in log[2].why
        named = SessionNet(NetRules((f"127.0.0.1:{server.port}",)))  # the rule names the address: reached
        answer = _ask_proxy(named, b"GET http://127.0.0.1:%d/none HTTP/1.1\r\nHost: x\r\n\r\n" % server.port)
        assert answer.startswith(b"HTTP/1.0 404 File not found")  # the test server's own answer
        assert [(c.allowed, c.why) for c in named.drain()] == [(True, f"127.0.0.1:{server.port}")]
        named.close()
    finally:
        net.close()
        server.close()


@pytest.fixture
def index(tmp_path: Path) -> Iterator[IndexServer]:
    server = IndexServer(wheel_index(tmp_path / "index"), INDEX_HOST)
    yield server
    server.close()


def _run(ws: Path, command: str, net: SessionNet) -> tuple[str, int | None]:
    running = run_in_sandbox(command, probe(), Policy(workspace=ws), Limits(timeout_s=60), lambda *_: None, net=net)
    while True:
        try:
            next(running)
        except StopIteration as done:
            return done.value.outcome.output, done.value.outcome.exit_code


@pytest.mark.slow
def test_pip_downloads_from_an_index_a_rule_allows_and_not_from_one_it_does_not(index: IndexServer,
                                                                                 tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    allowed = SessionNet(NetRules((f"{INDEX_HOST}:{index.port}",)))
    try:
        output, _ = _run(ws, pip_download(index.port), allowed)
        assert "tinypkg-1.0-py3-none-any.whl" in output.splitlines()[-1], output
        assert all(c.allowed for c in allowed.drain())
    finally:
        allowed.close()
    refused = SessionNet(NetRules())
    try:
        output, _ = _run(ws, pip_download(index.port), refused)
        assert "tinypkg-1.0-py3-none-any.whl" not in output
        lines = refused.refusals()
        assert lines == [f'{INDEX_HOST}:{index.port} is not allowed: [sandbox.network] allow = '
                         f'["{INDEX_HOST}:{index.port}"] in your user config allows it']
    finally:
        refused.close()


@pytest.mark.slow
def test_a_direct_connection_fails_as_before(index: IndexServer, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    net = SessionNet(NetRules((f"{INDEX_HOST}:{index.port}",)))  # even with a rule, only the proxy goes out
    try:
        command = (f"python3 -c \"import socket; socket.create_connection(('{INDEX_HOST}', {index.port}), 3)\" "
                   f"2>&1 | tail -1")
        output, _ = _run(ws, command, net)
        assert "Connection refused" in output or "unreachable" in output, output
        assert net.drain() == []
    finally:
        net.close()
    run = run_policy(ws, Policy(workspace=ws), f"curl -sS --max-time 3 http://{INDEX_HOST}:{index.port}/simple/")
    assert run.outcome.exit_code != 0  # and without the proxy at all, nothing goes out


UNPRIVILEGED = """
import sys
sys.path.insert(0, sys.argv[1])
sys.path.insert(0, sys.argv[1] + "/tests")
from pathlib import Path
from cli_agent.sandbox import NetRules, Policy, SessionNet, probe, run_in_sandbox
from cli_agent.sandbox.process import Limits
net = SessionNet(NetRules((sys.argv[3],)))
running = run_in_sandbox(sys.argv[4], probe(), Policy(workspace=Path(sys.argv[2])), Limits(timeout_s=60),
                         lambda *_: None, net=net)
while True:
    try:
        next(running)
    except StopIteration as done:
        print(done.value.outcome.output)
        break
net.close()
"""


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root to drop privileges")
def test_an_unprivileged_user_reaches_the_index_through_the_proxy(index: IndexServer) -> None:
    command = pip_download(index.port, "python3")
    done = run_as_nobody(UNPRIVILEGED, f"{INDEX_HOST}:{index.port}", command, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "tinypkg-1.0-py3-none-any.whl" in done.stdout, done.stdout

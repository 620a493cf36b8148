"""Every escape from the command sandbox the peers' record shows, attempted for real and failing.

Each test runs a real command in the real sandbox (bubblewrap, namespaces, overlay) and checks the host: nothing
written outside the workspace, nothing read that is secret, no connection made, no process left. Where it makes the
test able to fail, a positive control shows the same command working when the policy allows it.
"""

from __future__ import annotations

import os
import resource
import socket
import sys
import threading
import time
import uuid
from pathlib import Path

import pytest
from sandboxkit import processes_matching, sandboxed

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git" / "hooks").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    return root


@pytest.mark.slow
def test_writes_outside_through_absolute_paths_dotdot_and_tmp_do_not_reach_the_host(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    tag = uuid.uuid4().hex
    run = sandboxed(ws, f"echo x > {outside}/abs; echo x > ../dotdot-{tag}; echo x > /tmp/escape-{tag}; "
                        f"echo x > {sys.prefix}/escape-{tag}; echo x > /usr/escape-{tag}; echo x > /etc/escape-{tag}; "
                        f"echo x > $HOME/escape-{tag}; echo done")
    assert "done" in run.outcome.output
    assert list(outside.iterdir()) == []
    assert not (tmp_path / f"dotdot-{tag}").exists()
    for path in (f"/tmp/escape-{tag}", f"{sys.prefix}/escape-{tag}", f"/usr/escape-{tag}", f"/etc/escape-{tag}",
                 os.path.expanduser(f"~/escape-{tag}")):
        assert not os.path.exists(path), path
    assert run.changes.changes == ()  # and nothing for the workspace either


@pytest.mark.slow
def test_a_symlink_the_command_makes_leads_nowhere_and_is_never_applied(ws: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = sandboxed(ws, f"ln -s {outside} out; echo x > out/pwned; ln -s /etc/passwd pw; echo x >> pw; "
                        f"ln -s ../outside up; echo x > up/pwned2; echo done")
    assert "done" in run.outcome.output
    assert list(outside.iterdir()) == []
    refused = dict(run.changes.refused)
    assert {"out", "pw", "up"} <= set(refused) and all("symbolic link" in refused[p] for p in ("out", "pw", "up"))
    assert run.changes.changes == ()


@pytest.mark.slow
def test_git_hooks_and_the_project_folder_are_read_only(ws: Path) -> None:
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("max_steps = 3\n")
    run = sandboxed(ws, "echo 'curl evil' > .git/hooks/pre-commit; echo x > .git/config; "
                        "echo 'yes = true' >> .cli-agent/config.toml; rm -rf .git; echo done")
    assert "Read-only file system" in run.outcome.output
    assert not (ws / ".git" / "hooks" / "pre-commit").exists() and not (ws / ".git" / "config").exists()
    assert (ws / ".cli-agent" / "config.toml").read_text() == "max_steps = 3\n"
    assert [c.path for c in run.changes.changes if c.path.startswith((".git", ".cli-agent"))] == []


@pytest.mark.slow
def test_secrets_in_home_and_the_user_config_are_unreachable(ws: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "fakehome"
    for rel in (".ssh/id_rsa", ".aws/credentials", ".config/cli-agent/config.toml", ".netrc",
                ".local/share/keyrings/login.keyring", ".mozilla/firefox/p/logins.json"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET-{rel}\n")
    (home / ".cache" / "pip").mkdir(parents=True)
    (home / ".cache" / "pip" / "wheel.txt").write_text("cached\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLI_AGENT_HOME", raising=False)
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    run = sandboxed(ws, f"cat ~/.ssh/id_rsa {home}/.ssh/id_rsa ~/.aws/credentials ~/.netrc "
                        f"~/.config/cli-agent/config.toml ~/.local/share/keyrings/login.keyring "
                        f"~/.mozilla/firefox/p/logins.json; ls -a ~; cat ~/.cache/pip/wheel.txt")
    assert "SECRET" not in run.outcome.output
    assert "cached" in run.outcome.output  # the tool caches are readable


@pytest.mark.slow
def test_secrets_stay_masked_when_the_workspace_is_the_home_folder(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET key\n")
    (home / "notes.txt").write_text("fine\n")
    monkeypatch.setenv("HOME", str(home))
    run = sandboxed(home, "cat notes.txt .ssh/id_rsa; echo x > .ssh/authorized_keys")
    assert "fine" in run.outcome.output and "SECRET" not in run.outcome.output
    assert not (home / ".ssh" / "authorized_keys").exists()
    assert [c.path for c in run.changes.changes] == []


@pytest.mark.slow
def test_etc_shadow_is_masked(ws: Path) -> None:
    run = sandboxed(ws, "cat /etc/shadow /etc/gshadow 2>&1 | head -c 200; echo; cat /etc/passwd | head -1")
    assert "root:" in run.outcome.output  # /etc/passwd is there
    assert "root:$" not in run.outcome.output and "root:*:" not in run.outcome.output and \
        "root:!" not in run.outcome.output


class _Server:
    """A TCP server on 127.0.0.1, outside the sandbox, counting the connections it accepts."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.accepted = 0
        self.stop = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while not self.stop:
            try:
                conn, _ = self.sock.accept()
            except TimeoutError:
                continue
            self.accepted += 1
            conn.close()

    def close(self) -> None:
        self.stop = True
        self.thread.join()
        self.sock.close()


@pytest.mark.slow
def test_no_network_by_default_and_the_user_can_allow_it(ws: Path) -> None:
    server = _Server()
    try:
        probe = (f"{sys.executable} -c \"import socket; socket.create_connection(('127.0.0.1', {server.port}), "
                 f"timeout=3); print('CONNECTED')\"")
        run = sandboxed(ws, probe + f"; {sys.executable} -c \"import socket; socket.getaddrinfo('example.com', 80);"
                                    f" print('RESOLVED')\"")
        assert "CONNECTED" not in run.outcome.output and "RESOLVED" not in run.outcome.output
        assert server.accepted == 0
        allowed = sandboxed(ws, probe, network=True)  # sandbox.network = true in the user config
        assert "CONNECTED" in allowed.outcome.output and server.accepted == 1
    finally:
        server.close()


@pytest.mark.slow
def test_own_loopback_works_inside(ws: Path) -> None:
    run = sandboxed(ws, f"{sys.executable} -c \"import socket; s = socket.create_server(('127.0.0.1', 0)); "
                        f"c = socket.create_connection(s.getsockname()); print('LOOPBACK OK')\"")
    assert "LOOPBACK OK" in run.outcome.output


@pytest.mark.slow
def test_background_jobs_setsid_nohup_and_double_forks_die_with_the_command(ws: Path) -> None:
    tag = str(7000 + os.getpid() % 1000)
    run = sandboxed(ws, f"sleep 1{tag} & setsid sleep 2{tag} & nohup sleep 3{tag} >/dev/null 2>&1 & "
                        f"(sh -c 'sleep 4{tag} &' &); echo started")
    assert "started" in run.outcome.output and run.outcome.exit_code == 0
    deadline = time.monotonic() + 5
    while any(processes_matching(f"sleep {n}{tag}") for n in range(1, 5)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [processes_matching(f"sleep {n}{tag}") for n in range(1, 5)] == [[], [], [], []]


@pytest.mark.slow
def test_a_timeout_kills_everything(ws: Path) -> None:
    tag = str(8000 + os.getpid() % 1000)
    run = sandboxed(ws, f"sleep 5{tag} & sleep 6{tag}", timeout_s=1.0)
    assert run.outcome.timed_out and run.outcome.exit_code is None
    time.sleep(0.2)
    assert processes_matching(f"sleep 5{tag}") == [] and processes_matching(f"sleep 6{tag}") == []


@pytest.mark.slow
def test_a_fork_bomb_is_bounded(ws: Path) -> None:
    """Forking until it fails: the process limit stops it (fast), where nothing else would."""
    # The counted bomb stops by itself at 2,000 processes, so a missing limit fails the test without hurting the
    # machine; only once the limit is shown to hold does the unbounded classic run.
    counted = (f"{sys.executable} -c \"import os, time\nn = 0\nwhile n < 2000:\n  try:\n    pid = os.fork()\n"
               f"  except OSError as e:\n    print('stopped after', n, e); break\n  if pid == 0:\n"
               f"    time.sleep(60); os._exit(0)\n  n += 1\nprint('forked', n)\"")
    run = sandboxed(ws, counted, timeout_s=60.0)
    assert not run.outcome.timed_out and "stopped after" in run.outcome.output, run.outcome.output[-300:]
    assert int(run.outcome.output.split("stopped after")[1].split()[0]) < 512
    tag = str(9000 + os.getpid() % 1000)
    classic = sandboxed(ws, f"bomb{tag}() {{ bomb{tag} | bomb{tag} & }}; bomb{tag}; sleep 2", timeout_s=5.0)
    assert classic.outcome.duration_s < 30
    deadline = time.monotonic() + 10
    while processes_matching(f"bomb{tag}") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_matching(f"bomb{tag}") == []


# Allocating until it fails, bounded itself at 1 GiB: a missing cap fails the test without hurting the machine.
RUNAWAY = (f"{sys.executable} -c \"x = bytearray(64 << 20)\nprint('64 MiB allocated')\nparts = []\ntry:\n"
           f"  while len(parts) < 64:\n    parts.append(bytearray(16 << 20))\n  print('never stopped')\n"
           f"except MemoryError:\n  print('stopped at', len(parts) * 16 + 64, 'MiB')\"")


@pytest.mark.slow
def test_a_runaway_allocation_gets_a_memory_error_at_the_cap(ws: Path) -> None:
    run = sandboxed(ws, RUNAWAY, max_memory_bytes=256 << 20)
    out = run.outcome.output
    assert "64 MiB allocated" in out and "stopped at" in out and "never stopped" not in out, out[-500:]
    assert int(out.split("stopped at")[1].split()[0]) <= 256
    # the default cap, half the machine's memory and never under 1 GiB, leaves a command's 512 MiB alone
    default = sandboxed(ws, f"{sys.executable} -c \"x = bytearray(512 << 20); print('allocated', len(x) >> 20)\"")
    assert "allocated 512" in default.outcome.output, default.outcome.output[-500:]


@pytest.mark.slow
def test_a_runaway_allocation_is_capped_without_the_sandbox_too(ws: Path) -> None:
    from cli_agent.sandbox.process import Limits
    from cli_agent.sandbox.runner import run_unsandboxed

    running = run_unsandboxed(RUNAWAY, ws, Limits(timeout_s=60.0, max_memory_bytes=256 << 20))
    while True:
        try:
            next(running)
        except StopIteration as done:
            out = done.value.outcome.output
            break
    assert "stopped at" in out and "never stopped" not in out, out[-500:]


@pytest.mark.slow
def test_a_huge_write_is_bounded(ws: Path) -> None:
    limit = 32 << 20
    run = sandboxed(ws, "head -c 10G /dev/zero > big.bin; echo exit=$?; head -c 10G /dev/zero > /tmp/big; "
                        "echo tmp=$?", max_file_bytes=limit, timeout_s=60.0)
    assert not run.outcome.timed_out
    assert "exit=0" not in run.outcome.output and "tmp=0" not in run.outcome.output
    assert all(len(c.after or b"") <= limit for c in run.changes.changes)


@pytest.mark.slow
def test_a_gigabyte_of_output_is_capped_in_bounded_memory(ws: Path) -> None:
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run = sandboxed(ws, "head -c 1G /dev/zero | tr '\\0' x; echo; echo THE-END", timeout_s=120.0)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert run.outcome.output_bytes > 1 << 30
    assert len(run.outcome.output) < 20_000 and "bytes of output left out" in run.outcome.output
    assert run.outcome.output.rstrip().endswith("THE-END") and run.outcome.output.startswith("xxxx")
    assert after - before < 64 * 1024  # KiB: the peak grew by less than 64 MiB for 1 GiB of output

"""The sandbox keeps the host out: what a repository names, kernel settings, host sockets, the environment and
secret files. Each test runs a real command in the real sandbox and checks the host; docs/sandbox.md's table has a
row for each."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from places import REPO
from sandboxkit import run_policy, sandboxed

from cli_agent.config.settings import Settings
from cli_agent.facts.store import workspace_for
from cli_agent.tools.context import command_setup

# the system's interpreter: a venv's may lie under a HOME the tests replace (pyenv), or under a folder nobody may read
PY = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else "python3"

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / "a.txt").write_text("a\n")
    return root


# -- what a repository names ----------------------------------------------------------------------------------

@pytest.mark.slow
def test_repository_locks_never_bind_the_host_and_a_missing_one_breaks_nothing(tmp_path: Path, ws: Path,
                                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("SECRET-KEY\n")
    (home / ".aws").mkdir()
    (home / ".aws" / "credentials").write_text("SECRET-AWS\n")
    monkeypatch.setenv("HOME", str(tmp_path / "elsewhere"))  # HOME's own masks must not be what saves us
    (ws / "link").symlink_to(home)
    (ws / "kept.txt").write_text("kept\n")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "facts.toml").write_text(
        '[locks]\npaths = ["../home/.ssh", "link/.aws/credentials", "missing.txt", "../../../../../../etc/shadow"]\n')
    settings = Settings(workspace=str(ws), locks=["../home/.aws/credentials", "/kept.txt", "*.lock"])
    setup = command_setup(settings, workspace_for(settings))
    assert setup is not None and setup.capability is not None
    run = run_policy(ws, setup.policy, f"cat ../home/.ssh/id_rsa {home}/.ssh/id_rsa ../home/.aws/credentials "
                                       f"link/.aws/credentials /etc/shadow; echo x > kept.txt; echo ran")
    out = run.outcome.output
    assert "ran" in out  # a lock naming nothing did not break the sandbox
    assert "SECRET" not in out and "root:$" not in out and "root:*" not in out and "root:!" not in out
    assert "Read-only file system" in out and (ws / "kept.txt").read_text() == "kept\n"  # the inside lock holds
    assert setup.policy.read_only == (".git", ".cli-agent", "kept.txt")
    lock_notes = [n for n in setup.notes if n.startswith("lock ")]
    assert len(lock_notes) == 5 and all("\n" not in n for n in lock_notes)
    assert any("missing.txt" in n and "nothing exists there" in n for n in lock_notes)


def test_a_lock_naming_a_host_socket_or_fifo_is_never_bound(ws: Path) -> None:
    os.mkfifo(ws / "fifo")
    settings = Settings(workspace=str(ws), locks=["fifo"])
    setup = command_setup(settings, workspace_for(settings))
    assert setup is not None and setup.policy.read_only == (".git", ".cli-agent")
    assert "never bound" in setup.notes[0] and setup.notes[0].startswith("lock 'fifo'")


# -- kernel interfaces -------------------------------------------------------------------------------------------

# Inside the sandbox: every file under /proc (but the processes' own folders), /sys and /dev that could be opened for
# writing, and every mount that is not read-only. Opening for writing changes nothing; only writing would.
KERNEL_PROBE = r"""
import errno, os
ALLOWED = {"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
           "/dev/console"}
writable = []
for top in ("/proc", "/sys", "/dev"):
    for folder, dirs, files in os.walk(top):
        if folder == "/proc":
            dirs[:] = [d for d in dirs if not d.isdigit() and d not in ("self", "thread-self")]
        if folder.startswith(("/dev/pts", "/dev/shm", "/dev/mqueue")):
            dirs[:] = []
            continue
        for name in files:
            path = os.path.join(folder, name)
            if path in ALLOWED or os.path.islink(path):
                continue
            try:
                fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
            except OSError:
                continue
            os.close(fd)
            writable.append(path)
print("WRITABLE", len(writable), " ".join(writable[:20]))
print("SYS", sorted(os.listdir("/sys")) if os.path.isdir("/sys") else "absent")
"""


@pytest.mark.slow
def test_no_kernel_interface_is_writable(ws: Path, tmp_path: Path) -> None:
    """As root, the sandbox's uid 0 is the host's: /proc/sys/kernel/* (core_pattern!) was writable. Now /proc/sys and
    the other kernel folders are read-only, /sys is absent, /dev holds only the harmless nodes. Run as root here and
    as nobody in test_unprivileged.py."""
    (tmp_path / "probe.py").write_text(KERNEL_PROBE)
    # the user config can't show them either: read_paths and write_paths naming a kernel tree are not bound
    run = sandboxed(ws, f"{PY} {tmp_path / 'probe.py'}", read_paths=(str(tmp_path / "probe.py"), "/sys", "/proc/sys"),
                    write_paths=("/dev/shm", "/proc/sys/kernel"))
    out = run.outcome.output
    assert "WRITABLE 0 " in out, out
    assert "SYS absent" in out or "SYS []" in out, out
    # the value written back unchanged, so that a broken sandbox changes nothing on the host
    core = sandboxed(ws, "for f in kernel/core_pattern kernel/printk_ratelimit_burst vm/overcommit_memory; do "
                         "v=$(cat /proc/sys/$f) && echo \"$v\" > /proc/sys/$f && echo WROTE $f; done; echo done")
    assert "done" in core.outcome.output and "WROTE" not in core.outcome.output


# -- the environment -----------------------------------------------------------------------------------------------

LEAKY = {"GITHUB_PAT": "ghp", "DATABASE_URL": "postgres://u:pw@db/x", "PGPASSWORD": "pw", "MYSQL_PWD": "pw",
         "REDIS_URL": "redis://:pw@r", "SECRET_KEY_BASE": "kb", "SENTRY_DSN": "https://k@s/1",
         "SLACK_WEBHOOK_URL": "https://hooks/x", "CI_JOB_JWT": "jwt", "DOCKER_AUTH_CONFIG": "{}",
         "HTTPS_PROXY": "http://u:pw@proxy:3128", "npm_config__authToken": "npm", "OPENAI_API_KEY": "sk",
         "HARMLESS_LOOKING": "x"}


@pytest.mark.slow
def test_commands_get_an_allowlisted_environment(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in LEAKY.items():
        monkeypatch.setenv(name, f"LEAK-{value}")
    monkeypatch.setenv("LANG", "C.UTF-8")
    monkeypatch.setenv("LC_ALL", "C.UTF-8")
    monkeypatch.setenv("DEPLOY_TOKEN", "named-by-user")
    monkeypatch.setenv("MYAPP_MODE", "named-by-prefix")
    run = sandboxed(ws, "env", env_allow=("DEPLOY_TOKEN", "MYAPP_*"))
    out = run.outcome.output
    assert "LEAK-" not in out, out
    assert "DEPLOY_TOKEN=named-by-user" in out and "MYAPP_MODE=named-by-prefix" in out
    assert "LANG=C.UTF-8" in out and "LC_ALL=C.UTF-8" in out and "TMPDIR=/tmp" in out and "PATH=" in out
    names = {line.split("=", 1)[0] for line in out.splitlines() if "=" in line}
    import fnmatch

    from cli_agent.sandbox.environment import BASE
    assert all(any(fnmatch.fnmatchcase(n, p) for p in (*BASE, "DEPLOY_TOKEN", "MYAPP_*", "TMPDIR", "PWD", "SHLVL",
                                                         "_", "OLDPWD")) for n in names), names


@pytest.mark.slow
def test_the_dropped_variables_are_said_by_cli_agent_sandbox_and_where_a_command_wants_one(
        ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.tools import ToolContext
    from cli_agent.tools.handlers.commands import run_command

    monkeypatch.setenv("GITHUB_PAT", "LEAK-ghp")
    monkeypatch.setenv("DATABASE_URL", "LEAK-db")
    monkeypatch.setenv("OLDPWD", "/somewhere")
    settings = Settings(workspace=str(ws))
    workspace = workspace_for(settings)
    setup = command_setup(settings, workspace)
    assert setup is not None
    assert not [n for n in setup.notes if "environment variable" in n]  # not at every session's start

    def run(command: str) -> dict[str, object]:
        running = run_command(ToolContext(workspace, commands=setup), command)
        while True:
            try:
                next(running)
            except StopIteration as done:
                return done.value.data  # type: ignore[no-any-return]

    wants = run('test -n "$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 1; }')
    missing = run("no-such-tool --version")
    fine, failed_otherwise = run("echo ok"), run("echo 'assert 1 == 2'; exit 1")
    assert "DATABASE_URL is not passed to commands" in str(wants["environment"])
    assert "GITHUB_PAT" not in str(wants["environment"]) and "LEAK" not in str(wants) + str(missing)
    assert missing["exit_code"] == 127 and "exit 127 (command not found)" in str(missing["environment"])
    assert "environment" not in fine and "environment" not in failed_otherwise
    from cli_agent.ui.headless.sandbox_status import sandbox_report
    text, code = sandbox_report(settings)
    assert code == 0 and "GITHUB_PAT" in text and "LEAK" not in text
    assert "OLDPWD" not in text  # the shell's own: set again by the command's shell, never missed


# -- secret files ----------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_credential_files_in_homes_folders_and_cli_agents_own_are_unreachable(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    secrets = (".cache/huggingface/token", ".cache/huggingface/stored_tokens", ".cache/tool/a/b/auth.json",
               ".cache/gh/hosts.yml", ".local/lib/app/credentials.json", ".cache/x/id_ed25519", ".cache/x/tls.key",
               ".cache/x/client-key.pem", ".cache/app/.git-credentials", ".cache/cli-agent/state.json")
    code = (".pyenv/versions/3/lib/python3/token.py", ".pyenv/versions/3/lib/python3/secrets.py",
            ".local/lib/python3/site-packages/google/auth/credentials.py",
            ".local/lib/python3/site-packages/certifi/cacert.pem")
    for rel in (*secrets, *code, ".cache/pip/wheel.txt", ".cache/huggingface/hub/tokenizer.json"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET {rel}\n" if rel in secrets else f"fine {rel}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "agent-home"))  # cli-agent's default cache still hidden
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    run = sandboxed(ws, " ; ".join(f"cat ~/{rel}" for rel in secrets) + "; cat ~/.cache/pip/wheel.txt "
                    "~/.cache/huggingface/hub/tokenizer.json " + " ".join(f"~/{rel}" for rel in code))
    out = run.outcome.output
    assert "SECRET" not in out, out
    assert all(f"fine {rel}" in out for rel in code), out  # code and public certificates are no credentials
    assert "fine .cache/pip/wheel.txt" in out and "fine .cache/huggingface/hub/tokenizer.json" in out


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="writes under /etc; as an ordinary user /etc's private files are "
                                              "unreadable anyway")
def test_private_files_under_etc_are_hidden_by_rule(ws: Path) -> None:
    import shutil
    import uuid

    folder = Path("/etc") / f"cli-agent-test-{uuid.uuid4().hex[:8]}"
    try:
        (folder / "wireguard").mkdir(parents=True)
        (folder / "wireguard" / "wg0.conf").write_text("SECRET PrivateKey\n")
        (folder / "wireguard" / "wg0.conf").chmod(0o600)
        (folder / "live").mkdir(mode=0o700)
        (folder / "live" / "chain.pem").write_text("SECRET in a private folder\n")
        (folder / "live" / "chain.pem").chmod(0o644)
        (folder / "krb5.keytab").write_text("SECRET keytab\n")
        (folder / "krb5.keytab").chmod(0o644)
        (folder / "public.conf").write_text("fine\n")
        run = sandboxed(ws, f"cat {folder}/wireguard/wg0.conf {folder}/live/chain.pem {folder}/krb5.keytab "
                            f"{folder}/public.conf; cat /etc/ssl/private/* 2>&1 | head -c 100")
        assert "SECRET" not in run.outcome.output and "PRIVATE KEY" not in run.outcome.output
        assert "fine" in run.outcome.output
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# -- the table ---------------------------------------------------------------------------------------------------

def test_every_row_of_the_reach_table_is_in_the_docs_and_has_its_test() -> None:
    from cli_agent.sandbox.reach import ROWS, markdown_table

    root = REPO
    assert markdown_table() in (root / "docs" / "sandbox.md").read_text(encoding="utf-8")
    tests = "".join(p.read_text(encoding="utf-8") for p in (root / "tests").rglob("test_*.py"))
    missing = [row.test for row in ROWS if f"def {row.test}(" not in tests]
    assert missing == [], missing


def test_cli_agent_sandbox_prints_the_table(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.sandbox.reach import ROWS
    from cli_agent.ui.headless.sandbox_status import sandbox_report

    text, code = sandbox_report(Settings(workspace=str(ws)))
    assert code == 0 and all(row.what.replace("`", "") in text for row in ROWS)


# -- host sockets -------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_no_host_socket_is_connectable(ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Listening Unix sockets wherever a bound tree shows the host: a tool cache, a folder on PATH (as the venv is),
    a read path, the workspace and its `.git/` (git's fsmonitor daemon). None is connectable; a socket the command
    makes in its own /tmp still works."""
    import socket

    home = tmp_path / "home"
    places = [home / ".cache" / "daemon" / "s.sock", tmp_path / "bin" / "s.sock", tmp_path / "extra" / "s.sock",
              ws / ".git" / "fsmonitor--daemon.ipc", ws / "app.sock"]
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}:{os.environ['PATH']}")
    listeners = []
    try:
        for place in places:
            place.parent.mkdir(parents=True, exist_ok=True)
            listener = socket.socket(socket.AF_UNIX)
            listener.bind(str(place))
            listener.listen(5)
            listener.setblocking(False)
            listeners.append(listener)
        probe = tmp_path / "extra" / "connect.py"
        probe.write_text("import socket, sys\nfor p in sys.argv[1:]:\n    s = socket.socket(socket.AF_UNIX)\n"
                         "    try:\n        s.connect(p); print('CONNECTED', p)\n"
                         "    except OSError as e:\n        print('refused', p, e.errno)\n"
                         "own = socket.socket(socket.AF_UNIX); own.bind('/tmp/own.sock'); own.listen(1)\n"
                         "c = socket.socket(socket.AF_UNIX); c.connect('/tmp/own.sock'); print('OWN OK')\n")
        run = sandboxed(ws, f"{PY} {probe} " + " ".join(str(p) for p in places),
                        read_paths=(str(tmp_path / "extra"),))
        out = run.outcome.output
        assert "CONNECTED" not in out and out.count("refused") == len(places), out
        assert "OWN OK" in out
        for listener in listeners:
            with pytest.raises(BlockingIOError):
                listener.accept()
    finally:
        for listener in listeners:
            listener.close()


# -- time ----------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_the_runs_deadline_cuts_a_long_command(ws: Path, tmp_path: Path) -> None:
    """`--timeout 6` and a call asking for 60 s: the command is cut at the run's deadline, not after 60 s."""
    import json
    import subprocess
    import time

    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command",
                                                   "arguments": {"command": "sleep 60", "timeout_s": 60}}]},
                                  {"text": "done"}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}", "-C",
                           str(ws), "--timeout", "6", "--yes", "--output", "json"], env=env, capture_output=True,
                          text=True, timeout=120)
    took = time.monotonic() - started
    assert took < 20, (took, done.stderr)
    assert done.returncode == 5, done.stderr

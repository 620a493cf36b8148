"""`--api-base` as a user gives it: a URL without its scheme is a usage error at start (exit 2, one line, no request
sent), from a flag, the environment or a config file; and a server that refuses the connection is retried with a
line on stderr for each retry as it happens, not minutes of silence before one line."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_"))}
    return out | {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def cli(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, capture_output=True, text=True,
                          timeout=120, stdin=subprocess.DEVNULL)


def test_an_api_base_without_its_scheme_is_a_usage_error_at_start(ws: Path, env: dict[str, str],
                                                                  tmp_path: Path) -> None:
    flag = cli(["-C", str(ws), "--model", "openai/test", "--api-base", "localhost:8080", "-p", "hi"], env)
    assert flag.returncode == 2 and flag.stdout == ""
    assert flag.stderr.count("\n") == 1 and "--api-base" in flag.stderr
    assert "http://localhost:8080" in flag.stderr  # what to write instead
    from_env = cli(["-C", str(ws), "--model", "openai/test", "-p", "hi"], env | {"CLI_AGENT_API_BASE": "localhost:1"})
    assert from_env.returncode == 2 and "CLI_AGENT_API_BASE" in from_env.stderr
    config = tmp_path / "c.toml"
    config.write_text('api_base = "127.0.0.1:8080/v1"\n')
    from_file = cli(["-C", str(ws), "--model", "openai/test", "--config", str(config), "-p", "hi"], env)
    assert from_file.returncode == 2 and "c.toml" in from_file.stderr and "api_base" in from_file.stderr
    assert "Traceback" not in flag.stderr + from_env.stderr + from_file.stderr


def test_each_retry_of_a_refused_connection_is_shown_as_it_happens(ws: Path, env: dict[str, str]) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    with subprocess.Popen([sys.executable, "-m", "cli_agent", "-C", str(ws), "--model", "openai/test",
                           "--api-base", f"http://127.0.0.1:{port}/v1", "-p", "hi"],
                          env=env | {"CLI_AGENT_MAX_RETRIES": "2", "CLI_AGENT_RETRY_BASE_DELAY": "2"},
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True) as process:
        assert process.stderr is not None
        first = process.stderr.readline()
        assert first.startswith("cli-agent: retrying in ") and "(attempt 1)" in first and str(port) in first
        assert process.poll() is None  # shown while the run still waits, not with its end
        rest = process.stderr.read()
        assert process.wait(timeout=120) == 1
    lines = [first, *rest.splitlines()]
    assert sum("retrying in" in line for line in lines) == 2
    assert "gave up after 3 tries" in lines[-1]

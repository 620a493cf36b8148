"""Network by rule through the CLI, headless: a command fetches from a small PEP 503 index on a loopback address
through the sandbox's proxy when `[sandbox.network] allow` names it; with no rule the command's result names the
host and the setting, and every connection, allowed or refused, is a `network_connection` event in stream-json."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from clikit import cli, user_config
from netkit import INDEX_HOST, IndexServer, pip_download, wheel_index

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def _session(tmp_path: Path, config: str, command: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    user_config(home, config)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                                  {"text": "done"}]))
    done = cli(["-p", "go", "--model", f"scripted:{script}", "-C", str(ws), "--yes", "--output", "stream-json"],
               home=home)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    result = next(e for e in events if e.get("type") == "tool_result")
    return events, result["envelope"]["data"]


@pytest.fixture
def index(tmp_path: Path) -> Any:
    server = IndexServer(wheel_index(tmp_path / "index"), INDEX_HOST)
    yield server
    server.close()


def test_an_allowed_index_is_reached_and_each_connection_is_an_event(tmp_path: Path, index: IndexServer) -> None:
    config = f'[sandbox.network]\nallow = ["{INDEX_HOST}:{index.port}"]\n'
    events, data = _session(tmp_path, config, pip_download(index.port))
    assert "tinypkg-1.0-py3-none-any.whl" in data["output"].splitlines()[-1], data["output"]
    seen = [e for e in events if e.get("type") == "network_connection"]
    assert seen and all(e["allowed"] and e["host"] == INDEX_HOST and e["port"] == index.port for e in seen)
    assert "network" not in data


def test_an_unlisted_host_is_refused_and_the_result_names_the_setting(tmp_path: Path, index: IndexServer) -> None:
    events, data = _session(tmp_path, "", pip_download(index.port))
    assert "tinypkg-1.0-py3-none-any.whl" not in data["output"]
    assert data["network"] == (f'{INDEX_HOST}:{index.port} is not allowed: [sandbox.network] allow = '
                               f'["{INDEX_HOST}:{index.port}"] in your user config allows it')
    refused = [e for e in events if e.get("type") == "network_connection"]
    assert refused and not any(e["allowed"] for e in refused)


def test_cli_agent_sandbox_shows_the_network_mode_and_the_rules(tmp_path: Path) -> None:
    home = tmp_path / "home"
    user_config(home, '[sandbox.network]\nallow = ["localhost:3141"]\npresets = ["python"]\n')
    shown = cli(["sandbox"], home=home).stdout
    assert "network:   by rule, through cli-agent's proxy" in shown
    assert "allow localhost:3141" in shown and "preset python: pypi.org, files.pythonhosted.org" in shown
    user_config(home, "[sandbox]\nnetwork = true\n")
    assert "network:   ALL of the host's (sandbox.network = true)" in cli(["sandbox"], home=home).stdout
    user_config(home, '[sandbox.network]\npresets = ["cobol"]\n')
    refused = cli(["sandbox"], home=home)
    assert refused.returncode != 0 and "unknown preset 'cobol'" in refused.stderr

"""`[[permissions]]` rules with `domains` reach the sandbox's network: an allow for tool "run_command" (or "network")
lets a command fetch from a small package index on a loopback address, headless, with no `[sandbox.network]` rule;
a deny refuses it even where `[sandbox.network] allow` names the host, and the command's result names the rule."""

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


def _run(tmp_path: Path, config: str, command: str) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir(exist_ok=True)
    user_config(home, config)
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                                  {"text": "done"}]))
    done = cli(["-p", "go", "--model", f"scripted:{script}", "-C", str(ws), "--yes", "--output", "stream-json"],
               home=home)
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return events, next(e for e in events if e.get("type") == "tool_result")["envelope"]["data"]


@pytest.fixture
def index(tmp_path: Path) -> Any:
    server = IndexServer(wheel_index(tmp_path / "index"), INDEX_HOST)
    yield server
    server.close()


@pytest.mark.parametrize("tool", ["run_command", "network"])
def test_an_allow_rule_with_domains_lets_a_command_reach_the_host(tmp_path: Path, index: IndexServer,
                                                                   tool: str) -> None:
    config = (f'[[permissions]]\nname = "index"\ndecision = "allow"\ntool = "{tool}"\n'
              f'domains = ["{INDEX_HOST}:{index.port}"]\n')
    events, data = _run(tmp_path, config, pip_download(index.port))
    assert "tinypkg-1.0-py3-none-any.whl" in data["output"].splitlines()[-1], data["output"]
    seen = [e for e in events if e.get("type") == "network_connection"]
    assert seen and all(e["allowed"] and "allowed by rule index (user config:" in e["why"] for e in seen), seen


def test_a_deny_rule_with_domains_beats_the_sandbox_allow_list(tmp_path: Path, index: IndexServer) -> None:
    config = (f'[sandbox.network]\nallow = ["{INDEX_HOST}:{index.port}"]\n\n'
              f'[[permissions]]\nname = "no-index"\ndecision = "deny"\ntool = "run_command"\n'
              f'domains = ["{INDEX_HOST}:{index.port}"]\nreason = "not this index"\n')
    events, data = _run(tmp_path, config, pip_download(index.port))
    assert "tinypkg-1.0-py3-none-any.whl" not in data["output"]
    assert data["network"].startswith(f"{INDEX_HOST}:{index.port} is denied by rule no-index (user config:"), data
    assert "(not this index)" in data["network"]
    refused = [e for e in events if e.get("type") == "network_connection"]
    assert refused and not any(e["allowed"] for e in refused)

"""A real third-party MCP server from PyPI (`mcp-server-time`, in the dev extra) end to end: discovery, the prompt,
a native tool call through the loopback OpenAI-compatible server, approval, the result and the trace, all in a
`cli-agent` subprocess. And with no server configured, nothing of the `mcp` SDK is imported."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.history.trace import read_trace
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

TIME_SERVER = shutil.which("mcp-server-time", path=str(Path(sys.executable).parent)) or shutil.which("mcp-server-time")


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_"))}
    return out | {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def user_config(env: dict[str, str], text: str) -> None:
    folder = Path(env["CLI_AGENT_HOME"]) / "config"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.toml").write_text(text)


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)


TIME_CONFIG = '[mcp_servers.time]\ncommand = {cmd}\nargs = ["--local-timezone", "Europe/Paris"]\n{extra}'


@pytest.mark.slow
@pytest.mark.skipif(TIME_SERVER is None, reason="mcp-server-time (the dev extra) is not installed")
def test_mcp_server_time_end_to_end_through_the_loopback_model(tmp_path, env):
    ws = tmp_path / "ws"
    ws.mkdir()
    user_config(env, TIME_CONFIG.format(cmd=json.dumps(TIME_SERVER), extra=""))
    trace = tmp_path / "t.jsonl"
    arguments = {"source_timezone": "Europe/Paris", "time": "12:00", "target_timezone": "Asia/Tokyo"}
    replies = [{"tool_calls": [{"name": "time__convert_time", "arguments": arguments}]},
               {"text": "It is 20:00 in Tokyo."}]
    with FakeOpenAIServer(list(replies)) as server:
        denied = cli(["-p", "noon in Paris is what time in Tokyo?", "--model", "openai/test", "--api-base",
                      server.url, "--trace", str(tmp_path / "denied.jsonl")], env, ws)
    assert denied.returncode == 3, denied.stderr  # an MCP tool asks; headless without --yes: denied
    assert "time__convert_time needs approval" in denied.stderr
    with FakeOpenAIServer(list(replies)) as server:
        result = cli(["-p", "noon in Paris is what time in Tokyo?", "--model", "openai/test", "--api-base",
                      server.url, "--trace", str(trace), "--yes", "-o", "json"], env, ws)
        requests = server.requests
    assert result.returncode == 0, result.stderr
    tools = {t["function"]["name"]: t["function"] for t in requests[0]["tools"]}
    assert {"time__get_current_time", "time__convert_time"} <= set(tools)
    assert "target_timezone" in tools["time__convert_time"]["parameters"]["properties"]
    assert "## time (MCP server) tools" in requests[0]["messages"][0]["content"]
    answer = requests[1]["messages"][-1]
    assert answer["role"] == "tool"
    assert json.loads(answer["content"])["data"]["structured"]["time_difference"] == "+8.0h"
    events = read_trace(trace).events
    [called] = [e for e in events if e.type == "tool_result"]
    assert called.tool == "time__convert_time" and called.envelope.ok
    assert called.envelope.data["structured"]["target"]["timezone"] == "Asia/Tokyo"
    assert [e.by for e in events if e.type == "approval_decided"] == ["policy"]
    assert json.loads(result.stdout)["answer"] == "It is 20:00 in Tokyo."


NOT_IMPORTED = """
import sys
from cli_agent.cli.main import run
code = run(sys.argv[1:])
print(code, sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
"""

REPL_STARTUP = """
import sys
from cli_agent.config.loading import load_settings
from cli_agent.session.session import default_provider_factory
from cli_agent.ui.repl.start.startup import Startup
startup = Startup(lambda: load_settings({"model": sys.argv[1]}), default_provider_factory)
startup.start()
session = startup.get()
print(type(session).__name__, sorted(m for m in sys.modules if m == "mcp" or m.startswith(("mcp.", "mcp_types"))))
startup.close()
"""


@pytest.mark.slow
def test_with_no_server_configured_nothing_of_the_sdk_is_imported(tmp_path, env):
    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "hello"}]))
    one_shot = subprocess.run([sys.executable, "-c", NOT_IMPORTED, "-p", "hi", "--model", f"scripted:{script}"],
                              env=env, cwd=ws, capture_output=True, text=True, timeout=120)
    assert one_shot.stdout.splitlines()[-1] == "0 []", one_shot.stderr
    repl = subprocess.run([sys.executable, "-c", REPL_STARTUP, f"scripted:{script}"], env=env, cwd=ws,
                          capture_output=True, text=True, timeout=120)
    assert repl.stdout.splitlines()[-1] == "Session []", repl.stderr
    user_config(env, '[mcp_servers.off]\ncommand = "never-started"\nenabled = false\n')  # a disabled one: neither
    one_shot = subprocess.run([sys.executable, "-c", NOT_IMPORTED, "-p", "hi", "--model", f"scripted:{script}"],
                              env=env, cwd=ws, capture_output=True, text=True, timeout=120)
    assert one_shot.stdout.splitlines()[-1] == "0 []", one_shot.stderr

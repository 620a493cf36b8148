"""The real CLI against an OpenAI-compatible HTTP server on 127.0.0.1: both transports, both protocols, faults.

`openai/...` with `--api-base` goes through the httpx transport; `hosted_vllm/...`-style strings that the httpx
path does not claim go through LiteLLM. Each case is a real subprocess, as a user or a script would run it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys

import pytest

from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer


@pytest.fixture
def env(tmp_path):
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_"))}
    return out | {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}



def cli(args, env, timeout=120):
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, capture_output=True, text=True,
                          timeout=timeout)


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_native_multi_step_work_with_two_calls_in_one_turn(ws, env):
    replies = [
        {"tool_calls": [call("create_file", path="app.py", content="print('app')\n"),
                        call("create_file", path="README.md", content="# app\n")]},
        {"tool_calls": [call("read_file", path="app.py")]},
        {"text": "Created app.py and README.md."},
    ]
    with FakeOpenAIServer(replies) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "-y", "-o", "json",
                      "-p", "make an app"], env)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["files_changed"] == ["app.py", "README.md"]
        assert (ws / "app.py").read_text() == "print('app')\n"
        assert len(server.requests) == 3
        tool_messages = [m for m in server.requests[1]["messages"] if m["role"] == "tool"]
        assert len(tool_messages) == 2 and server.requests[0]["tools"]


@pytest.mark.slow
def test_json_protocol_over_http(ws, env):
    (ws / "notes.txt").write_text("alpha\n")
    replies = [{"text": '{"tool": "edit_file", "parameters": {"path": "notes.txt", "old": "alpha", '
                        '"new": "beta"}, "terminate": true}'}]
    with FakeOpenAIServer(replies) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "--protocol", "json", "-y",
                      "-p", "rename in notes.txt"], env)
        assert result.returncode == 0, result.stderr
        assert (ws / "notes.txt").read_text() == "beta\n"
        assert "tools" not in server.requests[0]


@pytest.mark.slow
@pytest.mark.parametrize("status", [500, 429])
def test_server_errors_are_retried_then_succeed(ws, env, status):
    replies = [{"status": status, "headers": {"Retry-After": "0"}}, {"text": "recovered"}]
    with FakeOpenAIServer(replies) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "-p", "hi",
                      "--config", str(_fast_retry(ws))], env)
        assert result.returncode == 0, result.stderr
        assert result.stdout == "recovered\n" and len(server.requests) == 2


@pytest.mark.slow
def test_persistent_500_exits_1_after_the_retries(ws, env):
    with FakeOpenAIServer([{"status": 500}] * 5) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "-p", "hi",
                      "--config", str(_fast_retry(ws))], env)
    assert result.returncode == 1
    assert "gave up" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_unreachable_api_base_exits_1_naming_the_url(ws, env):
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", url, "-p", "hi",
                  "--config", str(_fast_retry(ws))], env)
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert url.split("/v1")[0] in last


@pytest.mark.slow
def test_slow_reply_hits_the_timeout(ws, env):
    with FakeOpenAIServer([{"text": "late", "delay": 10}]) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "-p", "hi",
                      "--timeout", "1"], env)
    assert result.returncode == 5
    assert "timed out" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_streaming_text_reaches_stream_json(ws, env):
    with FakeOpenAIServer([{"text": "one two three", "chunks": ["one ", "two ", "three"]}]) as server:
        result = cli(["-C", str(ws), "--model", "openai/test", "--api-base", server.url, "-p", "hi",
                      "-o", "stream-json"], env)
    deltas = [json.loads(line)["text"] for line in result.stdout.splitlines()
              if json.loads(line)["type"] == "text_delta"]
    assert deltas == ["one ", "two ", "three"]


@pytest.mark.slow
def test_missing_key_exits_2_naming_the_variable(ws, env):
    result = cli(["-C", str(ws), "--model", "openai/gpt-4o-mini", "-p", "hi"], env)
    assert result.returncode == 2
    assert "OPENAI_API_KEY" in result.stderr.strip().splitlines()[-1]


@pytest.mark.slow
def test_litellm_transport_does_real_tool_calls(ws, env):
    """The LiteLLM path (a model string the httpx transport does not claim) against the same loopback server."""
    replies = [{"tool_calls": [call("create_file", path="x.txt", content="x")]}, {"text": "done"}]
    with FakeOpenAIServer(replies) as server:
        result = cli(["-C", str(ws), "--model", "lm_studio/test", "--api-base", server.url, "--protocol",
                      "native", "-y", "-p", "make x"], env)
        assert result.returncode == 0, result.stderr
        assert (ws / "x.txt").read_text() == "x" and server.requests[0]["tools"]


def _fast_retry(ws):
    path = ws.parent / "fast.toml"
    path.write_text("max_retries = 2\nretry_base_delay = 0.01\n")
    return path

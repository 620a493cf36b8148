"""web_fetch and a background server through the real CLI and sandbox: with the user's `[web] allow_private`, a
server a background `run_command` started on 127.0.0.1 answers web_fetch (the session's loopback, not the host's
server on the same port); without it loopback stays refused."""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clikit import user_config

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


@pytest.fixture
def host_server(tmp_path: Path) -> Iterator[int]:
    """A server on the host's own 127.0.0.1 (the port the session's server takes too)."""
    folder = tmp_path / "host"
    folder.mkdir()
    (folder / "index.html").write_text("the host's page\n")
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _run(tmp_path: Path, ws: Path, port: int, config: str) -> list[dict[str, Any]]:
    calls = [{"name": "run_command", "arguments": {"command": f"python3 -m http.server {port} --bind 127.0.0.1",
                                                    "background": True}},
             {"name": "web_fetch", "arguments": {"url": f"http://127.0.0.1:{port}/"}},
             {"name": "stop_process", "arguments": {"process": 1}}]
    script = tmp_path / "script.json"
    script.write_text(json.dumps([*({"tool_calls": [call]} for call in calls), {"text": "done"}]))
    home = tmp_path / "home"
    user_config(home, config)
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true"}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "-p", "go", "--model", f"scripted:{script}",
                           "-C", str(ws), "--output", "json", "--yes"], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    out = []  # each call's result as the model got it (the session's trace)
    for path in home.rglob("*.jsonl"):
        records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        out += [r["envelope"] for r in records if r.get("type") == "tool_result"]
    return out


def test_web_fetch_reaches_a_background_server_of_the_session(tmp_path: Path, ws: Path, host_server: int) -> None:
    (ws / "index.html").write_text("the session's page\n")
    started, fetched, stopped = _run(tmp_path, ws, host_server, "[web]\nallow_private = true\n")
    assert started["ok"] and stopped["ok"], (started, stopped)
    assert fetched["ok"] is True, fetched
    text = json.dumps(fetched)
    assert "the session's page" in text and "the host's page" not in text


def test_without_allow_private_web_fetch_of_a_background_server_is_refused(tmp_path: Path, ws: Path) -> None:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        port = free.getsockname()[1]
    (ws / "index.html").write_text("the session's page\n")
    _, fetched, _ = _run(tmp_path, ws, port, "")
    assert fetched["ok"] is False and "loopback" in json.dumps(fetched), fetched

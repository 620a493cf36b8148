"""Adversarial model output and provider faults: lone surrogates, streams cut off without a finish reason,
`{tool: x}` in the json protocol, and `--output json` on every exit path, each through the real CLI."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    return tmp_path / "ws"


def cli(args: list[str], extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | {"CI": "1"} | (extra or {})
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], capture_output=True, text=True, timeout=180,
                          env=env)


def scripted(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


# -- lone surrogates ---------------------------------------------------------------------------------------------

SURROGATES = ["\ud800", "\udfff", "a\udc80b", "\ud83d"]  # lone highs and lows; "\ud83d\ude00" would be a pair


@pytest.mark.slow
@pytest.mark.parametrize("lone", SURROGATES)
@pytest.mark.parametrize("output", ["text", "json", "stream-json"])
def test_a_lone_surrogate_in_an_answer_is_shown_escaped(ws: Path, tmp_path: Path, lone: str, output: str) -> None:
    result = cli(["-C", str(ws), "--model", scripted(tmp_path, [{"text": f"the answer {lone}"}]), "-o", output,
                  "-p", "go"])
    assert result.returncode == 0, result.stderr
    assert "internal error" not in result.stderr
    if output == "json":
        answer = json.loads(result.stdout)["answer"]
        assert answer.startswith("the answer ") and "\\u" in answer
    trace = next((Path(os.environ["CLI_AGENT_HOME"]) / "state" / "traces").glob("*.jsonl"))
    assert all(json.loads(line) for line in trace.read_text(encoding="utf-8").splitlines())  # whole and valid


@pytest.mark.slow
@pytest.mark.parametrize("where", ["content", "path", "key"])
def test_a_lone_surrogate_in_arguments_goes_back_to_the_model(ws: Path, tmp_path: Path, where: str) -> None:
    arguments = {"path": "n.txt", "content": "x"}
    if where == "key":
        arguments["\ud800"] = "x"
    else:
        arguments[where] += "\ud800"
    model = scripted(tmp_path, [{"tool_calls": [{"name": "create_file", "arguments": arguments}]},
                                {"text": "gave up"}])
    result = cli(["-C", str(ws), "--model", model, "-y", "-o", "json", "-p", "go"])
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["answer"] == "gave up" and report["files_changed"] == []
    assert any("lone surrogate" in w for w in report["warnings"])
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt"]


@pytest.mark.slow
def test_lone_surrogates_in_the_json_protocol_count_as_malformed(ws: Path, tmp_path: Path) -> None:
    bad = '{"tool": "create_file", "parameters": {"path": "n.txt", "content": "\\ud800"}, "terminate": false}'
    model = scripted(tmp_path, [{"raw": bad}] * 3)
    result = cli(["-C", str(ws), "--model", model, "--protocol", "json", "-y", "-o", "json", "-p", "go"])
    assert result.returncode == 6, result.stderr
    assert json.loads(result.stdout)["status"] == "unusable"


# -- {tool: x}: a failed call, not an answer ---------------------------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("raw", ["{tool: read_file}", "{tool: read_file, parameters: {path: a.txt}}",
                                 "```json\n{'tool': 'read_file'}\n```", "  {\"tool\": read_file}",
                                 "Calling it now: {tool: \"read_file\", \"parameters\": {}}", "{"])
def test_a_broken_json_call_counts_toward_the_three_strikes(ws: Path, tmp_path: Path, raw: str) -> None:
    result = cli(["-C", str(ws), "--model", scripted(tmp_path, [{"raw": raw}] * 3), "--protocol", "json",
                  "-o", "json", "-p", "go"])
    assert result.returncode == 6, (raw, result.stdout, result.stderr)
    report = json.loads(result.stdout)
    assert report["answer"] == "" and len(report["warnings"]) >= 2


@pytest.mark.slow
@pytest.mark.parametrize("text", ["Done: the file has 3 lines.", "Use a dict like {a: 1} in Python.",
                                  'It prints "tool: x" and exits.'])
def test_prose_with_braces_is_still_an_answer(ws: Path, tmp_path: Path, text: str) -> None:
    result = cli(["-C", str(ws), "--model", scripted(tmp_path, [{"raw": text}]), "--protocol", "json",
                  "-o", "json", "-p", "go"])
    assert result.returncode == 0 and json.loads(result.stdout)["answer"] == text


# -- a stream cut off is a provider error -------------------------------------------------------------------------

class CutServer:
    """An OpenAI-compatible server on 127.0.0.1 whose every streamed reply stops early and closes the connection:
    no finish reason, no [DONE]."""

    def __init__(self, events: list[dict]) -> None:
        self.events = events
        self.requests = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(next((line.split(b":")[1] for line in head.split(b"\r\n")
                                   if line.lower().startswith(b"content-length")), b"0"))
                while len(body) < length:
                    body += conn.recv(65536)
                self.requests += 1
                events = b"".join(b"data: " + json.dumps(e).encode() + b"\n\n" for e in self.events)
                conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n"
                             + events)

    def close(self) -> None:
        self.sock.close()


def _delta(**delta: object) -> dict:
    return {"id": "x", "object": "chat.completion.chunk", "created": 0, "model": "m",
            "choices": [{"index": 0, "delta": delta, "finish_reason": None}]}


@pytest.mark.slow
@pytest.mark.parametrize("events", [
    [_delta(role="assistant", content="The answer is 4"), _delta(content="2 and the rest is")],
    [_delta(role="assistant", tool_calls=[{"index": 0, "id": "c1", "type": "function",
                                           "function": {"name": "read_file", "arguments": '{"path": "a.t'}}])],
    [],
])
def test_a_stream_cut_off_is_retried_then_exit_1(ws: Path, events: list[dict]) -> None:
    server = CutServer(events)
    try:
        result = cli(["-C", str(ws), "--model", "openai/m", "--api-base", server.url, "--api-key", "k", "-o", "json",
                      "-p", "what is 6*7?"], extra={"CLI_AGENT_MAX_RETRIES": "2", "CLI_AGENT_RETRY_BASE_DELAY": "0"})
    finally:
        server.close()
    assert result.returncode == 1, (result.stdout, result.stderr)
    report = json.loads(result.stdout)
    assert report["status"] == "error" and report["answer"] == ""
    assert "cut off" in result.stderr.splitlines()[-1]
    assert server.requests == 3  # the first try and two retries

"""`cli-agent acp` over real stdio, the turn's details an editor relies on: a cancel that does not wait for a slow
model, tool-call ids unique within a session, a file read shown as text, and stdin/stdout that are regular files."""

from __future__ import annotations

import asyncio
import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from acpkit import Recorder, agent_command, call, drive, write_script

from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    return root


def test_a_cancel_ends_the_turn_while_a_slow_model_reply_is_in_flight(ws: Path) -> None:
    with FakeOpenAIServer([{"text": "late answer", "delay": 30}, {"text": "next turn fine"}]) as server:
        async def body(conn: Any, client: Recorder, process: Any) -> None:
            from acp import text_block

            session = await conn.new_session(cwd=str(ws))
            sid = session.session_id
            turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("think hard")]))
            while not server.requests:  # the request is in flight
                await asyncio.sleep(0.05)
            await conn.cancel(session_id=sid)
            done = await asyncio.wait_for(turn, 15)  # the reply would come only after 30 s
            assert done.stop_reason == "cancelled"
            assert "late answer" not in client.text(sid)

        drive(ws, "openai/slow", body, None, "--api-base", server.url)


def test_tool_call_ids_are_unique_within_a_session_whatever_the_model_sends(ws: Path, tmp_path: Path) -> None:
    """The json protocol numbered calls by the step of each prompt; a server may send `call_0` every reply."""
    as_json = {"text": json.dumps({"tool": "read_file", "parameters": {"path": "a.txt"}, "terminate": False})}
    for protocol, read in (("json", as_json), ("native", {"tool_calls": [call("read_file", "call_0", path="a.txt")]})):
        model = write_script(tmp_path / f"{protocol}.json", [read, {"text": "one"}, read, {"text": "two"}])

        async def body(conn: Any, client: Recorder, process: Any) -> None:
            from acp import text_block

            session = await conn.new_session(cwd=str(ws))
            for text in ("first", "second"):
                done = await conn.prompt(session_id=session.session_id, prompt=[text_block(text)])
                assert done.stop_reason == "end_turn"

        client = Recorder()
        drive(ws, model, body, client, "--protocol", protocol)
        starts = [u.tool_call_id for _, u in client.updates if u.session_update == "tool_call"]
        assert len(starts) == 2 and len(set(starts)) == 2, (protocol, starts)
        for call_id in starts:
            assert [u.status for u in client.tool_updates(call_id)][-1] == "completed"


def test_a_file_read_is_sent_as_text_content(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt")]},
        {"text": "it says hello"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("read a.txt")])

    client = Recorder()
    drive(ws, model, body, client)
    done = client.tool_updates("r1")[-1]
    assert done.status == "completed"
    texts = [c.content.text for c in done.content or [] if c.type == "content"]
    assert texts == ["```\nhello\n```"]


def test_stdin_and_stdout_may_be_regular_files(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [{"text": "hi"}])
    requests = tmp_path / "requests.jsonl"
    requests.write_text("\n".join(json.dumps(m) for m in [
        {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": 1}},
        {"jsonrpc": "2.0", "id": 1, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}},
        {"jsonrpc": "2.0", "id": 2, "method": "session/list", "params": {"cwd": str(ws)}},
    ]) + "\n")
    replies = tmp_path / "replies.jsonl"
    with requests.open("rb") as stdin, replies.open("wb") as stdout:
        done = subprocess.run(agent_command(model, ws), stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                              text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "Pipe transport" not in done.stderr and "Traceback" not in done.stderr
    answered = {m["id"]: m for m in map(json.loads, replies.read_text().splitlines()) if "id" in m}
    assert answered[0]["result"]["agentCapabilities"]["loadSession"] is True
    assert answered[1]["result"]["sessionId"]
    assert "sessions" in answered[2]["result"]


def test_a_whole_turn_runs_with_stdout_a_regular_file(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt")]}, {"text": "it says hello"}])
    replies = tmp_path / "replies.jsonl"

    def answer(ident: int) -> dict[str, Any]:
        for _ in range(1200):
            for line in replies.read_text().splitlines():
                message = json.loads(line)
                if message.get("id") == ident and "method" not in message:
                    return message  # type: ignore[no-any-return]
            time.sleep(0.1)
        raise AssertionError(f"no answer to request {ident}: {replies.read_text()}")

    with replies.open("wb") as stdout, subprocess.Popen(agent_command(model, ws), stdin=subprocess.PIPE,
                                                         stdout=stdout, stderr=subprocess.PIPE) as process:
        assert process.stdin is not None and process.stderr is not None

        def send(message: dict[str, Any]) -> None:
            assert process.stdin is not None
            process.stdin.write((json.dumps({"jsonrpc": "2.0", **message}) + "\n").encode())
            process.stdin.flush()

        send({"id": 0, "method": "initialize", "params": {"protocolVersion": 1}})
        send({"id": 1, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}})
        sid = answer(1)["result"]["sessionId"]
        send({"id": 2, "method": "session/prompt",
              "params": {"sessionId": sid, "prompt": [{"type": "text", "text": "read a.txt"}]}})
        assert answer(2)["result"]["stopReason"] == "end_turn"
        process.stdin.close()
        assert process.wait(timeout=60) == 0
        assert b"Traceback" not in process.stderr.read()
    updates = [m["params"]["update"] for m in map(json.loads, replies.read_text().splitlines())
               if m.get("method") == "session/update"]
    assert "it says hello" in "".join(u["content"]["text"] for u in updates
                                      if u["sessionUpdate"] == "agent_message_chunk")
    assert [u["status"] for u in updates if u.get("toolCallId") == "r1"][-1] == "completed"


def test_code_an_edit_makes_unreachable_is_named_in_the_permission_request(ws: Path, tmp_path: Path) -> None:
    (ws / "calc.py").write_text("def mean(values):\n    return sum(values) / (len(values) + 1)\n")
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("edit_file", "e1", path="calc.py", old="    return sum",
                             new="    return sum(values) / len(values)\n    return sum")]},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("fix mean in calc.py")])

    client = Recorder(["reject_once"])
    drive(ws, model, body, client)
    notes = [c.content.text for c in client.asked[0].content if c.type == "content"]
    assert any("line 3 of mean() can never run" in note for note in notes), notes


def test_each_retry_of_an_unreachable_model_is_shown_to_the_editor(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again: nothing listens there
    monkeypatch.setenv("CLI_AGENT_MAX_RETRIES", "2")
    monkeypatch.setenv("CLI_AGENT_RETRY_BASE_DELAY", "0.1")

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import RequestError, text_block

        session = await conn.new_session(cwd=str(ws))
        with pytest.raises(RequestError, match="gave up after 3 tries"):
            await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        thoughts = client.text(session.session_id, "agent_thought_chunk")
        assert thoughts.count("retrying in") == 2 and "(attempt 2)" in thoughts and str(port) in thoughts

    drive(ws, "openai/away", body, None, "--api-base", f"http://127.0.0.1:{port}/v1")

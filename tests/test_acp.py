"""`cli-agent acp` end to end: a child process driven by the ACP SDK's own client side over real stdio, with the
scripted model. Sessions, streaming, tool calls with kinds, locations and diffs, permission requests and their
answers, modes, cancel, session/load, a client that dies mid-turn, and bad JSON-RPC."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


class Recorder:
    """The client: records every session update and permission request; answers each request with the next of
    `answers` (an option id), or leaves it unanswered until `release` is set when the answer is "wait"."""

    def __init__(self, answers: list[str] | None = None) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.asked: list[Any] = []
        self.answers = list(answers or [])
        self.asking = asyncio.Event()
        self.release = asyncio.Event()

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        from acp.schema import AllowedOutcome, DeniedOutcome, RequestPermissionResponse

        self.asked.append(tool_call)
        self.asking.set()
        answer = self.answers.pop(0)
        if answer == "wait":
            await self.release.wait()
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        assert answer in {o.option_id for o in options}
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    def kinds(self, session_id: str | None = None) -> list[str]:
        return [u.session_update for sid, u in self.updates if session_id in (None, sid)]

    def text(self, session_id: str | None = None, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for sid, u in self.updates
                       if u.session_update == kind and session_id in (None, sid))

    def tool_updates(self, call_id: str) -> list[Any]:
        return [u for _, u in self.updates if getattr(u, "tool_call_id", None) == call_id]


def write_script(path: Path, replies: list[dict[str, Any]]) -> str:
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def call(name: str, call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "id": call_id, "arguments": arguments}


def agent_command(model: str, ws: Path, *flags: str) -> list[str]:
    return [sys.executable, "-m", "cli_agent", "--model", model, *flags, "acp", "-C", str(ws)]


def drive(ws: Path, model: str, body: Any, client: Recorder | None = None, *flags: str) -> Any:
    """Start `cli-agent acp`, initialize, and run `body(conn, client, process)`; returns its value."""
    from acp import PROTOCOL_VERSION, spawn_agent_process

    client = client or Recorder()
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI"))}

    async def main() -> Any:
        with (ws.parent / "acp.log").open("a") as errlog:
            command, *args = agent_command(model, ws, *flags)
            async with spawn_agent_process(client, command, *args, env=env,
                                           transport_kwargs={"stderr": errlog}) as (conn, process):
                init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
                assert init.agent_capabilities.load_session is True
                return await asyncio.wait_for(body(conn, client, process), 120)

    return asyncio.run(main())


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    return root


def test_a_turn_reads_streams_and_asks_before_each_edit(ws: Path, tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.json", [
        {"tool_calls": [call("read_file", "r1", path="a.txt")]},
        {"tool_calls": [call("edit_file", "e1", path="a.txt", old="hello", new="hi")]},
        {"text": "Done: hi.", "chunks": ["Done", ": hi."]},
        {"tool_calls": [call("edit_file", "e2", path="a.txt", old="hi", new="bye")]},
        {"text": "never said"},
    ])

    async def body(conn: Any, client: Recorder, process: Any) -> None:
        from acp import text_block

        session = await conn.new_session(cwd=str(ws))
        assert session.modes.current_mode_id == "ask"
        assert [m.id for m in session.modes.available_modes] == ["ask", "edits", "all"]
        first = await conn.prompt(session_id=session.session_id, prompt=[text_block("change a.txt")])
        assert first.stop_reason == "end_turn"
        assert (ws / "a.txt").read_text() == "hi\n"
        second = await conn.prompt(session_id=session.session_id, prompt=[text_block("again")])
        assert second.stop_reason == "end_turn"  # denied: the turn ends, nothing written
        assert (ws / "a.txt").read_text() == "hi\n"

    client = Recorder(["allow_once", "reject_once"])
    drive(ws, model, body, client)
    starts = {u.tool_call_id: u for _, u in client.updates if u.session_update == "tool_call"}
    assert starts["r1"].kind == "read" and starts["r1"].locations[0].path == str(ws / "a.txt")
    assert starts["e1"].kind == "edit"
    assert [u.status for u in client.tool_updates("r1")][-1] == "completed"
    done = client.tool_updates("e1")[-1]
    assert done.status == "completed"
    assert done.content[0].type == "diff" and done.content[0].old_text == "hello\n" and \
        done.content[0].new_text == "hi\n"
    assert [a.tool_call_id for a in client.asked] == ["e1", "e2"]
    assert client.asked[0].content[0].new_text == "hi\n"
    assert client.tool_updates("e2")[-1].status == "failed"
    assert "Done: hi." in client.text()
    assert "available_commands_update" in client.kinds()

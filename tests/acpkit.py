"""The client side of the `cli-agent acp` tests: a recording client, a scripted model's file, and a driver that
starts `cli-agent acp` as a child process over real stdio and initializes it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["Recorder", "agent_command", "call", "drive", "write_script"]


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
            async with spawn_agent_process(client, command, *args, env=env,  # type: ignore[arg-type] # a test client
                                           transport_kwargs={"stderr": errlog}) as (conn, process):
                init = await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
                assert init.agent_capabilities is not None and init.agent_capabilities.load_session is True
                return await asyncio.wait_for(body(conn, client, process), 120)

    return asyncio.run(main())

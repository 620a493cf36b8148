"""`cli-agent acp` over real stdio: an editor thread does not open with the list of environment variables the
command sandbox drops; a command that failed for want of one says so in its result."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]

WANTS = 'test -n "$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 1; }'


class Client:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def request_permission(self, options: list[Any], session_id: str, tool_call: Any, **kwargs: Any) -> Any:
        from acp.schema import DeniedOutcome, RequestPermissionResponse

        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


def test_an_editor_thread_opens_without_the_dropped_variables(tmp_path: Path) -> None:
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    ws = tmp_path / "ws"
    ws.mkdir()
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "id": "c1",
                                                   "arguments": {"command": WANTS}}]}, {"text": "needs one"}]))
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI", "PATH"))}
    env |= {"DATABASE_URL": "postgres://LEAK@db/x", "GITHUB_PAT": "LEAK-ghp"}
    client = Client()

    async def main() -> tuple[str, str]:
        command = [sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}", "acp", "-C", str(ws)]
        with (tmp_path / "acp.log").open("a") as errlog:
            async with spawn_agent_process(client, command[0], *command[1:], env=env,  # type: ignore[arg-type]
                                           transport_kwargs={"stderr": errlog}) as (conn, _process):
                await asyncio.wait_for(conn.initialize(protocol_version=PROTOCOL_VERSION), 60)
                session = await asyncio.wait_for(conn.new_session(cwd=str(ws)), 60)
                await asyncio.sleep(0.5)  # the notes of a new session are sent right after it opens
                opening = _text(client.updates)
                await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=[text_block("migrate")]),
                                       120)
                return opening, json.dumps([u.model_dump(mode="json") for u in client.updates])

    opening, everything = asyncio.run(main())
    assert "not passed to commands" not in opening and "GITHUB_PAT" not in opening
    assert "DATABASE_URL is not passed to commands" in everything and "LEAK" not in everything


def _text(updates: list[Any]) -> str:
    return "".join(u.content.text for u in updates if u.session_update == "agent_message_chunk")

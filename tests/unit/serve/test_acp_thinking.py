"""A reasoning model's thinking over ACP: `agent_thought_chunk` updates, apart from the answer's
`agent_message_chunk`s."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_agent.config.settings import Settings
from cli_agent.contracts.events import StopReason
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.serve.acp.turn import Turn
from cli_agent.session.session import open_session

pytestmark = pytest.mark.usefixtures("isolated_home")


class Client:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(5)
    running.close()


def test_thinking_is_a_thought_chunk_and_never_the_answer(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> None:
    provider = ScriptedProvider([{"thinking": "check the edge case first", "text": "all good"}])
    session = open_session(Settings(model="scripted:x", workspace=str(tmp_path)), interactive=True,
                           provider_factory=lambda settings: provider)
    try:
        client = Client()
        outcome = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("check it", None))
    finally:
        session.close()
    assert outcome.finished.stop_reason is StopReason.DONE and outcome.finished.answer == "all good"
    kinds = [(u.session_update, u.content.text) for u in client.updates
             if u.session_update in ("agent_thought_chunk", "agent_message_chunk")]
    thought = "".join(text for kind, text in kinds if kind == "agent_thought_chunk")
    said = "".join(text for kind, text in kinds if kind == "agent_message_chunk")
    assert thought == "check the edge case first" and said == "all good"
    assert kinds.index(next(k for k in kinds if k[0] == "agent_message_chunk")) > 0  # thinking came first

"""`acp.turn.Turn` in process: a real session with the scripted model, a client that records what it is sent, and
a cancel at the awkward moments (before the run starts, at a workflow's tool step outside the loop's steps)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cli_agent.config.settings import Settings
from cli_agent.contracts.events import StopReason
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.serve.acp.turn import Turn
from cli_agent.session.session import Session, open_session

pytestmark = pytest.mark.usefixtures("isolated_home")


class Client:
    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asked: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        raise AssertionError("a cancelled turn asks nothing")


@pytest.fixture
def loop() -> Iterator[asyncio.AbstractEventLoop]:
    running = asyncio.new_event_loop()
    thread = threading.Thread(target=running.run_forever, daemon=True)
    thread.start()
    yield running
    running.call_soon_threadsafe(running.stop)
    thread.join(5)
    running.close()


def session_with(ws: Path, replies: list[dict[str, Any]]) -> Session:
    provider = ScriptedProvider(replies)
    return open_session(Settings(model="scripted:x", workspace=str(ws)), interactive=True,
                        provider_factory=lambda settings: provider)


def test_a_turn_cancelled_before_its_first_event_ends_interrupted_and_the_session_goes_on(
        tmp_path: Path, loop: asyncio.AbstractEventLoop) -> None:
    session = session_with(tmp_path, [{"text": "fine"}])  # the cancelled turn never asks the model
    try:
        client = Client()
        turn = Turn("s", tmp_path, client, loop, session.trace)
        turn.cancel()
        outcome = turn.drive(session.run("create b", None))
        assert outcome.finished.stop_reason is StopReason.INTERRUPTED
        assert turn.answered.result() == outcome
        again = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("and now?", None))
        assert again.finished.stop_reason is StopReason.DONE and again.finished.answer == "fine"
    finally:
        session.close()


def test_a_workflow_tool_step_cancelled_at_its_proposal_writes_nothing(tmp_path: Path,
                                                                       loop: asyncio.AbstractEventLoop) -> None:
    from cli_agent.contracts.messages import ToolCall

    session = session_with(tmp_path, [])
    try:
        turn = Turn("s", tmp_path, Client(), loop, session.trace)
        events = session.run_call(ToolCall("w1", "create_file", {"path": "b.txt", "content": "b"}), None)
        first = next(events)  # RunStarted; the proposal comes next, outside the loop's steps
        assert first.type == "run_started"
        turn.cancel()
        outcome = turn.drive(events)
        assert outcome.finished.stop_reason is StopReason.INTERRUPTED
        assert not (tmp_path / "b.txt").exists()
    finally:
        session.close()


def test_the_plan_is_sent_as_plan_updates(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> None:
    steps = [{"step": "Read", "status": "in_progress"}, {"step": "Fix", "status": "pending"}]
    done = [{**s, "status": "completed"} for s in steps]
    session = session_with(tmp_path, [
        {"tool_calls": [{"name": "update_plan", "arguments": {"steps": steps}}]},
        {"tool_calls": [{"name": "update_plan", "arguments": {"steps": done}}]},
        {"text": "done"}])
    try:
        client = Client()
        outcome = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("plan it", None))
        assert outcome.finished.stop_reason is StopReason.DONE
        plans = [u.model_dump(by_alias=True, exclude_none=True) for u in client.updates
                 if getattr(u, "session_update", "") == "plan"]
        assert plans == [{"sessionUpdate": "plan", "entries": [
            {"content": "Read", "priority": "medium", "status": "in_progress"},
            {"content": "Fix", "priority": "medium", "status": "pending"}]},
                         {"sessionUpdate": "plan", "entries": [
            {"content": "Read", "priority": "medium", "status": "completed"},
            {"content": "Fix", "priority": "medium", "status": "completed"}]}]
    finally:
        session.close()


def test_a_task_call_runs_its_helper_in_an_acp_turn(tmp_path: Path, loop: asyncio.AbstractEventLoop) -> None:
    (tmp_path / "VERSION").write_text("3.1.4\n")
    session = session_with(tmp_path, [
        {"tool_calls": [{"name": "task", "arguments": {"description": "Read it", "prompt": "What is in VERSION?"}}]},
        {"tool_calls": [{"name": "read_file", "arguments": {"path": "VERSION"}}]},
        {"text": "3.1.4"},
        {"text": "It is 3.1.4."}])
    try:
        client = Client()
        outcome = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("version?", None))
        assert outcome.finished.answer == "It is 3.1.4."
        done = [u for u in client.updates if getattr(u, "session_update", "") == "tool_call_update"
                and getattr(u, "status", "") == "completed"]
        assert len(done) == 1 and "3.1.4" in json.dumps(done[0].model_dump(mode="json"))
    finally:
        session.close()


class Allowing(Client):
    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        from acp.schema import AllowedOutcome, RequestPermissionResponse

        self.asked.append(tool_call)
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))


def test_web_fetch_is_asked_through_the_editor_showing_the_url(tmp_path: Path,
                                                              loop: asyncio.AbstractEventLoop) -> None:
    from webkit import web_server

    from cli_agent.config.settings import WebSettings

    with web_server() as (base, hits):
        provider = ScriptedProvider([{"tool_calls": [{"name": "web_fetch", "arguments": {"url": f"{base}/page"}}]},
                                     {"text": "It is 2.0."}])
        session = open_session(Settings(model="scripted:x", workspace=str(tmp_path),
                                        web=WebSettings(allow_private=True)), interactive=True,
                               provider_factory=lambda settings: provider)
        try:
            client = Allowing()
            outcome = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("read it", None))
        finally:
            session.close()
    assert outcome.finished.answer == "It is 2.0." and hits == ["/page"]
    assert f"{base}/page" in json.dumps(client.asked[0].model_dump(mode="json"))
    assert client.asked[0].kind == "fetch"


@pytest.mark.slow  # the hook is a process
def test_a_hook_blocks_a_call_over_acp_and_is_told_as_a_thought(tmp_path: Path,
                                                               loop: asyncio.AbstractEventLoop) -> None:
    from cli_agent.config.hook_settings import Hook

    provider = ScriptedProvider([{"tool_calls": [{"name": "read_file", "arguments": {"path": "x"}}]},
                                 {"text": "blocked, fine"}])
    session = open_session(Settings(model="scripted:x", workspace=str(tmp_path), hooks=[Hook(
        event="before_tool", command="echo reads are off today >&2; exit 2")]), interactive=True,
                           provider_factory=lambda settings: provider)
    try:
        client = Client()
        outcome = Turn("s", tmp_path, client, loop, session.trace).drive(session.run("read x", None))
    finally:
        session.close()
    assert outcome.finished.answer == "blocked, fine"
    thoughts = "".join(u.content.text for u in client.updates if getattr(u, "session_update", "") ==
                       "agent_thought_chunk")
    assert "before_tool hook `echo reads are off today >&2; exit 2`: blocked: reads are off today" in thoughts

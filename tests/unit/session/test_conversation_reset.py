"""`/clear` starts a new session (the old one stays to resume); `/compact` starts the conversation again in the
session record: a resume sends the model exactly what was live after it, and a replay follows it; near the context
window the REPL compacts on its own."""

from __future__ import annotations

import json
import re

import pytest
from rich.console import Console

from cli_agent.config.settings import Settings
from cli_agent.contracts import LATEST
from cli_agent.contracts.messages import Message
from cli_agent.history.session_index import load_resumable
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.replay.engine import replay
from cli_agent.session.session import open_session, resume_into
from cli_agent.ui.repl.repl import Repl


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def repl_with(ws, replies, **settings) -> tuple[Repl, ScriptedProvider]:
    provider = ScriptedProvider(replies, **settings.pop("provider", {}))
    session = open_session(Settings(model="scripted:x", workspace=str(ws), **settings), interactive=True,
                           provider_factory=lambda s: provider)
    return Repl(session, Console(record=True, width=80, color_system=None), lambda s: provider), provider


def sent(provider: ScriptedProvider, n: int = -1) -> list[tuple[str, str]]:
    """The messages of request `n`, without the system prompt."""
    return [(m.role, m.content or "") for m in provider.requests[n].messages if m.role != "system"]


def resumed(ws, replies) -> tuple[Repl, ScriptedProvider]:
    repl, provider = repl_with(ws, replies)
    resume_into(repl.session, *load_resumable(ws, LATEST))
    return repl, provider


def test_clear_starts_a_new_session_that_a_resume_goes_on_with_and_the_old_one_stays(env):
    repl, _ = repl_with(env, [{"text": "one"}, {"text": "two"}])
    repl.turn("before the clear")
    old_trace = repl.session.trace_path
    repl.commands.dispatch(repl, "/clear")
    repl.turn("after the clear")
    trace = repl.session.trace_path
    assert trace != old_trace
    repl.session.close()
    again, provider = resumed(env, [{"text": "three"}])
    again.turn("and now")
    assert sent(provider) == [("user", "after the clear"), ("assistant", "two"), ("user", "and now")]
    again.session.close()
    old = [json.loads(line) for line in old_trace.read_text().splitlines()]
    assert [r["prompt"] for r in old if r["type"] == "run_started"] == ["before the clear"]  # kept to go back to
    assert replay(trace).divergence is None and replay(old_trace).divergence is None


def test_compact_replaces_the_conversation_by_the_summary_and_a_resume_continues_from_it(env):
    repl, provider = repl_with(env, [{"text": "first answer"}, {"text": "- the user asked about X\n- answered Y"},
                                     {"text": "next answer"}])
    repl.turn("tell me about X")
    repl.commands.dispatch(repl, "/compact the decisions")
    asked = sent(provider)
    assert asked[:2] == [("user", "tell me about X"), ("assistant", "first answer")]
    assert "Summarise our conversation" in asked[2][1] and "Pay most attention to: the decisions" in asked[2][1]
    out = repl.console.export_text()
    assert "the user asked about X" in out and "compacted: the summary above replaces the conversation" in out
    repl.turn("go on")
    assert sent(provider)[0][1].endswith("- the user asked about X\n- answered Y")
    assert [r for r, _ in sent(provider)] == ["user", "assistant", "user"]
    trace = repl.session.trace_path
    repl.session.close()
    again, second = resumed(env, [{"text": "resumed"}])
    again.turn("after the resume")
    assert sent(second)[:4] == [*sent(provider), ("assistant", "next answer")]
    again.session.close()
    assert replay(trace).divergence is None


def test_a_failed_compaction_keeps_the_whole_conversation(env):
    repl, _ = repl_with(env, [{"text": "first"}, {"error": "fatal", "message": "server down"}])
    repl.turn("hello")
    before = list(repl.session.agent.history)
    repl.commands.dispatch(repl, "/compact")
    assert repl.session.agent.history[:2] == before
    assert "not compacted" in repl.console.export_text()
    records = [json.loads(line) for line in repl.session.trace_path.read_text().splitlines()]
    assert not any(r["type"] == "conversation_reset" for r in records)
    repl.session.close()


def test_near_the_window_the_repl_compacts_before_the_turn_and_says_so(env):
    repl, provider = repl_with(env, [{"text": "the summary"}, {"text": "answered"}],
                               provider={"context_window": 8000})
    repl.session.agent.history[:] = [Message("user", "x" * 32_000), Message("assistant", "ok")]
    repl.session.agent._talk.window._window = 8000  # known after a first request
    repl.turn("next question")
    out = " ".join(repl.console.export_text().split())
    assert "the context is 100% full (8,002 of 8,000 tokens): compacting the conversation first" in out
    assert sent(provider)[0][1].endswith("the summary") and sent(provider)[-1] == ("user", "next question")
    records = [json.loads(line) for line in repl.session.trace_path.read_text().splitlines()]
    assert any(r["type"] == "conversation_reset" and r["auto"] for r in records)
    repl.session.close()


def test_diff_shows_this_sessions_changes_and_undo_list_each_turns_prompt(env):
    (env / "keep.py").write_text("a = 1\nb = 2\n")
    repl, _ = repl_with(env, [{"tool_calls": [{"name": "create_file", "arguments": {"path": "new.py",
                                                                                      "content": "x = 1\n"}}]},
                              {"text": "made"},
                              {"tool_calls": [{"name": "edit_file", "arguments": {"path": "keep.py", "old": "b = 2",
                                                                                    "new": "b = 3"}}]},
                              {"text": "edited"},
                              {"tool_calls": [{"name": "create_file", "arguments": {"path": "gone.py",
                                                                                      "content": "y\n"}}]},
                              {"text": "made again"}], yes=True)
    for prompt in ("make new", "edit keep.py", "make gone"):  # a task that names its file has read it
        repl.turn(prompt)
    repl.commands.dispatch(repl, "/undo")  # the last turn is undone: not in the diff
    repl.console.export_text()
    repl.commands.dispatch(repl, "/diff")
    out = repl.console.export_text()
    assert "+++ b/new.py" in out and "+x = 1" in out
    assert "--- a/keep.py" in out and "-b = 2" in out and "+b = 3" in out and " a = 1" in out
    assert "gone.py" not in out
    assert "2 files changed this session, +2 -1 lines" in out
    repl.commands.dispatch(repl, "/undo list")
    listed = " ".join(repl.console.export_text().split())
    assert re.search(r"'make new' \S+ create_file create new\.py", listed)
    assert "'edit keep.py' ← newest: /undo reverts it" in listed and "'make gone' (undone)" in listed
    assert listed.count("newest") == 1
    repl.session.close()

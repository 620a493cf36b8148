"""What the conversation gets between runs, and what a resumed session gets back of it: the note an /undo adds is
recorded in the trace (a `messages_appended` outside any run), and a `!COMMAND` output the user declines never
joins the conversation, so neither is lost nor brought back by a resume. Older traces read as before."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from cli_agent.config.settings import Settings
from cli_agent.contracts.events import Decision, EventStream, RunFinished
from cli_agent.contracts.messages import Message
from cli_agent.history.session_index import load_resumable
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import Session, drive, open_session, resume_into
from cli_agent.ui.repl.bang import run_bang
from cli_agent.ui.repl.repl import Repl

pytestmark = pytest.mark.usefixtures("isolated_home")

UNDO_NOTE = "(The user undid turn 1 of file changes: restored old.txt. Read files again before changing them.)"


def _settings(ws: Path, trace: Path) -> Settings:
    return Settings(model="scripted", workspace=str(ws), trace=str(trace))


def _resumed(ws: Path, tmp_path: Path, session_id: str) -> Session:
    entry, trace = load_resumable(ws, session_id)
    new = open_session(_settings(ws, tmp_path / "resumed.jsonl"), interactive=False,
                       provider_factory=lambda s: ScriptedProvider([]))
    resume_into(new, entry, trace)
    return new


def _editing_repl(ws: Path, tmp_path: Path, *more: dict[str, Any]) -> Repl:
    """A REPL whose model edits old.txt on its first turn (every change approved), then says `more`."""
    provider = ScriptedProvider([{"tool_calls": [{"name": "edit_file", "arguments": {
        "path": "old.txt", "old": "old", "new": "new"}}]}, {"text": "edited"}, *more])
    return Repl(open_session(_settings(ws, tmp_path / "t.jsonl"), interactive=True,
                             provider_factory=lambda s: provider),
                Console(record=True, width=200, color_system=None), lambda s: provider,
                approver=lambda asked: Decision.YES)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "old.txt").write_text("old\n")
    return root


def test_a_resumed_session_keeps_the_note_of_an_undo(ws: Path, tmp_path: Path) -> None:
    repl = _editing_repl(ws, tmp_path)
    try:
        repl.run_turn("edit old.txt")
        repl.commands.dispatch(repl, "/undo")
        assert repl.session.agent.history[-1] == Message("user", UNDO_NOTE)
        session_id = repl.session.session_id
    finally:
        repl.session.close()
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert records[-1]["type"] == "messages_appended" and records[-2]["type"] == "run_finished"
    assert read_trace(tmp_path / "t.jsonl").conversation()[-1].content == UNDO_NOTE  # complete, note and all
    resumed = _resumed(ws, tmp_path, session_id)
    try:
        history = resumed.agent.history
        assert [m.role for m in history] == ["user", "assistant", "tool", "assistant", "user"]
        assert (history[0].content or "").startswith("edit old.txt") and history[-1] == Message("user", UNDO_NOTE)
    finally:
        resumed.close()


def test_a_replay_gives_the_model_the_undo_note_where_the_session_did(ws: Path, tmp_path: Path) -> None:
    from cli_agent.contracts.events import ModelRequest
    from cli_agent.replay.engine import replay

    repl = _editing_repl(ws, tmp_path, {"text": "noted"})
    try:
        repl.run_turn("edit old.txt")
        repl.commands.dispatch(repl, "/undo")
        repl.run_turn("what now?")
    finally:
        repl.session.close()
    recorded = [e.messages for e in read_trace(tmp_path / "t.jsonl").events if isinstance(e, ModelRequest)]
    events: list = []
    result = replay(tmp_path / "t.jsonl", events.append)
    replayed = [e.messages for e in events if isinstance(e, ModelRequest)]
    assert result.divergence is None and result.runs == 2
    assert replayed == recorded == [2, 4, 7]  # the last request carries the note: system, 4 messages, note, prompt


class _Host:
    """What run_bang needs of a front end: the session, a console, the approver, drive and ask_key (answered)."""

    def __init__(self, session: Session, answer: str) -> None:
        self.session = session
        self.console = Console(record=True, width=200, color_system=None)
        self.own_approver = lambda asked: Decision.YES
        self.answer = answer
        self.asked: list[str] = []

    def drive(self, events: EventStream) -> RunFinished:
        return drive(events, self.session.trace)

    def ask_key(self, question: str) -> str:
        self.asked.append(question)
        return self.answer


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")
@pytest.mark.parametrize(("answer", "attached"), [("n", False), ("y", True)])
def test_a_resumed_session_brings_back_only_the_command_output_the_user_attached(ws: Path, tmp_path: Path,
                                                                                  answer: str,
                                                                                  attached: bool) -> None:
    provider = ScriptedProvider([{"text": "hello"}])
    session = open_session(_settings(ws, tmp_path / "t.jsonl"), interactive=True, provider_factory=lambda s: provider)
    host: Any = _Host(session, answer)
    try:
        if "run_command" not in session.registry:
            pytest.skip("no command sandbox here")
        drive(session.run("hi", None), session.trace)  # a turn the model answers: the session is in the index
        run_bang(host, "echo OUT-$((6*7))")
        assert len(host.asked) == 1 and "Attach your command's output" in host.asked[0]
        assert ("not attached" in host.console.export_text()) is not attached
        assert any("OUT-42" in (m.content or "") for m in session.agent.history) is attached
        session_id = session.session_id
    finally:
        session.close()
    resumed = _resumed(ws, tmp_path, session_id)
    try:
        assert resumed.agent.history[:2] == [Message("user", "hi"), Message("assistant", "hello")]
        assert any("OUT-42" in (m.content or "") for m in resumed.agent.history) is attached
        assert len(resumed.agent.history) == (3 if attached else 2)
    finally:
        resumed.close()


STARTED = {"type": "run_started", "run_id": "a", "prompt": "hi", "model": "m", "protocol": "native", "workspace": "w"}


def _write(path: Path, *records: dict[str, Any]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_a_note_after_a_format_1_run_keeps_that_runs_prompt_and_answer(tmp_path: Path) -> None:
    note = {"type": "messages_appended", "messages": [{"role": "user", "content": "(undone)"}]}
    trace = read_trace(_write(tmp_path / "t.jsonl", {"type": "trace_header", "format": 1},
                              STARTED,
                              {"type": "run_finished", "stop_reason": "done", "message": "done", "answer": "hello"},
                              note))
    assert trace.conversation() == [Message("user", "hi"), Message("assistant", "hello"), Message("user", "(undone)")]


def test_a_run_cut_off_after_its_messages_is_still_truncated(tmp_path: Path) -> None:
    from cli_agent.contracts.errors import TraceError

    path = _write(tmp_path / "t.jsonl", {"type": "trace_header", "format": 2},
                  STARTED,
                  {"type": "messages_appended", "messages": [{"role": "user", "content": "hi"}]})
    with pytest.raises(TraceError, match="truncated"):
        read_trace(path)
    assert read_trace(path, complete=False).conversation() == [Message("user", "hi")]

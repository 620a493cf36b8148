"""Sessions: the SQLite index, `cli-agent sessions`, `-c/--continue`, `--resume ID`, and the conversation a trace
records (`Trace.conversation`)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from agentkit import Answers, make_agent

from cli_agent.cli.main import run
from cli_agent.contracts import LATEST
from cli_agent.contracts.events import Decision
from cli_agent.history.session_index import SessionIndex, load_resumable
from cli_agent.history.trace import TraceWriter, read_trace
from cli_agent.providers.scripted import ScriptedProvider, check_conversation
from cli_agent.replay.engine import replay
from cli_agent.session.session import drive

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("alpha\n")
    return root


def one_shot(ws: Path, prompt: str, *replies, flags=()) -> tuple[int, ScriptedProvider]:
    provider = ScriptedProvider(list(replies))
    code = run(["-C", str(ws), "-p", prompt, "--model", "scripted", *flags], provider_factory=lambda s: provider)
    return code, provider


def test_a_one_shot_session_is_listed_with_its_first_message(ws, isolated_home, capsys):
    assert one_shot(ws, "read a.txt please", {"text": "alpha"})[0] == 0
    assert one_shot(ws, "second task", {"text": "ok"})[0] == 0
    capsys.readouterr()
    assert run(["sessions", "-C", str(ws)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("ID ")  # the header row
    assert "second task" in lines[1] and "read a.txt please" in lines[2]  # last used first
    assert (isolated_home / "state" / "sessions.sqlite3").is_file()
    assert run(["sessions", "-C", str(ws), "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["first_message"] for s in listed] == ["second task", "read a.txt please"]
    assert all(s["resumable"] and Path(s["trace"]).is_file() for s in listed)


def test_sessions_of_other_workspaces_are_not_listed(ws, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    one_shot(other, "elsewhere", {"text": "ok"})
    capsys.readouterr()
    assert run(["sessions", "-C", str(ws)]) == 0
    assert "no sessions" in capsys.readouterr().out


def test_continue_brings_the_conversation_back(ws, capsys):
    one_shot(ws, "remember the word kiwi", {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]},
             {"text": "I will remember kiwi."})
    code, provider = one_shot(ws, "which word?", {"text": "kiwi"}, flags=("-c",))
    assert code == 0
    messages = provider.requests[0].messages
    contents = [m.content or "" for m in messages]
    assert contents[1] == "remember the word kiwi" and contents[-1] == "which word?"
    assert any(m.role == "tool" and "alpha" in (m.content or "") for m in messages)
    assert "I will remember kiwi." in contents
    entries = SessionIndex().list(ws)
    assert len(entries) == 1  # continuing keeps one session, now pointing at the new trace
    trace = read_trace(entries[0].trace_path)
    assert [r[0].prompt for r in trace.runs] == ["remember the word kiwi", "which word?"]
    assert replay(entries[0].trace_path).divergence is None  # the continued trace is self-contained


def test_resume_by_id_prefix(ws, capsys):
    one_shot(ws, "first", {"text": "one"})
    one_shot(ws, "second", {"text": "two"})
    first = SessionIndex().list(ws)[1]
    code, provider = one_shot(ws, "again", {"text": "ok"}, flags=("--resume", first.id[:5]))
    assert code == 0
    assert [m.content for m in provider.requests[0].messages[1:]] == ["first", "one", "again"]


@pytest.mark.parametrize(("flags", "message"), [
    (("-c",), "no earlier session"),
    (("--resume", "feedbeef"), "no session 'feedbeef'"),
    (("-c", "--resume", "x"), "exclude each other"),
])
def test_nothing_to_resume_exits_2_with_one_line(flags, message, ws, capsys):
    assert one_shot(ws, "hi", {"text": "x"}, flags=flags)[0] == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


@pytest.mark.parametrize(("damage", "reason"), [
    (lambda path: path.unlink(), "its trace is missing"),
    (lambda path: path.write_text("\n".join(path.read_text().splitlines()[:-1]) + "\n"), "truncated"),
    (lambda path: path.write_text('{"format": 7, "type": "trace_header"}\n'), "unknown trace format 7"),
])
def test_a_missing_or_damaged_trace_is_listed_as_such_and_cannot_be_resumed(damage, reason, ws, capsys):
    one_shot(ws, "task", {"text": "x"})
    damage(SessionIndex().latest(ws).trace_path)
    capsys.readouterr()
    assert run(["sessions", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "cannot resume" in out and reason in out
    code, provider = one_shot(ws, "more", {"text": "y"}, flags=("-c",))
    assert code == 2 and not provider.requests
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "cannot be resumed" in err[0] and reason in err[0]


def test_a_session_of_another_workspace_cannot_be_resumed_here(ws, tmp_path, capsys):
    other = tmp_path / "other"
    other.mkdir()
    one_shot(other, "elsewhere", {"text": "ok"})
    entry = SessionIndex().latest(other)
    with pytest.raises(Exception, match="belongs to"):
        load_resumable(ws, entry.id)


def test_an_unwritable_index_never_fails_a_run(ws, isolated_home, capsys):
    (isolated_home / "state").mkdir(parents=True)
    (isolated_home / "state" / "sessions.sqlite3").mkdir()  # not a database
    code = run(["-C", str(ws), "-p", "hi", "--model", "scripted", "--output", "json"],
               provider_factory=lambda s: ScriptedProvider([{"text": "fine"}]))
    assert code == 0
    assert "not in the session index" in " ".join(json.loads(capsys.readouterr().out)["notes"])


def test_index_schema_is_migrated_and_a_newer_one_refused(tmp_path):
    index = SessionIndex(tmp_path / "s.sqlite3")
    sid = index.add(workspace=tmp_path, model="m", trace_path=tmp_path / "t.jsonl")
    index.note_prompt(sid, "  first   prompt ")
    index.note_prompt(sid, "second")
    assert index.get(sid).first_message == "first prompt"
    with sqlite3.connect(index.path) as db:
        db.execute("PRAGMA user_version = 99")
    with pytest.raises(Exception, match="newer cli-agent"):
        index.latest(tmp_path)
    assert LATEST.startswith("@")


# -- restore_history rebuilds exactly what the agent held --------------------------------------------------------

def call(name, **arguments):
    return {"name": name, "arguments": arguments}


CONVERSATIONS = {
    "native calls and errors": ("native", [
        {"tool_calls": [call("read_file", path="a.txt"), call("nope"), {"name": "read_file", "arguments": "{"}]},
        {"tool_calls": [call("create_file", path="b.txt", content="B")]},
        {"text": ""},  # an empty reply: a strike
        {"text": "done"}], True, []),
    "json protocol with strikes and terminate": ("json", [
        {"raw": '{"tool": "read_file", "parameters": {"path": "a.txt"}'},
        {"raw": '{"tool": "read_file", "parameters": {"path": "a.txt"}, "terminate": false}'},
        {"raw": '{"tool": "create_file", "parameters": {"path": "c.txt", "content": "C"}, "terminate": true}'}],
        True, []),
    "a denial answers the rest of the turn": ("native", [
        {"tool_calls": [call("read_file", path="a.txt"), call("create_file", path="d.txt", content="D"),
                        call("create_file", path="e.txt", content="E")]}], False, [Decision.NO]),
    "step limit leaves no call unanswered": ("native", [{"tool_calls": [call("list_files")]}] * 2, True, []),
}


@pytest.mark.parametrize("name", CONVERSATIONS)
def test_the_traced_conversation_equals_the_agents_history(name, ws, tmp_path):
    protocol, replies, yes, answers = CONVERSATIONS[name]
    max_steps = 2 if name.startswith("step") else 20
    agent, _ = make_agent(ws, list(replies), protocol=protocol, yes=yes, interactive=bool(answers),
                          max_steps=max_steps)
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, {"workspace": str(ws), "protocol": protocol}) as writer:
        drive(agent.run("first task", Answers(*answers)), writer)
        if name.startswith("json"):  # a second run, as a REPL would have
            drive(agent.run("second task", Answers()), writer)
    restored = read_trace(path).conversation()
    assert restored == agent.history
    check_conversation(restored)


def test_the_traced_conversation_after_an_interrupted_turn(ws, tmp_path):
    class Interrupting(ScriptedProvider):
        def stream(self, request):
            if len(self.requests) == 1:
                self.requests.append(request)
                raise KeyboardInterrupt
            return super().stream(request)

    provider = Interrupting([{"tool_calls": [call("list_files")]}])
    agent, _ = make_agent(ws, [], provider=provider)
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, {"workspace": str(ws), "protocol": "native"}) as writer:
        finished = drive(agent.run("look around", Answers()), writer)
    assert finished.exit_code == 130
    assert read_trace(path).conversation() == agent.history


def test_the_traced_conversation_of_a_workflow_tool_step(ws, tmp_path):
    from cli_agent.contracts.messages import ToolCall

    agent, _ = make_agent(ws, [{"text": "noted"}], yes=True)
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, {"workspace": str(ws), "protocol": "native"}) as writer:
        drive(agent.run_call(ToolCall("step_1", "create_file", {"path": "w.txt", "content": "W"},
                                      '{"path": "w.txt", "content": "W"}'), Answers()), writer)
        drive(agent.run("and now?", Answers()), writer)
    assert read_trace(path).conversation() == agent.history
    assert replay(path).divergence is None


def test_a_cut_tool_result_comes_back_as_the_model_saw_it(ws, tmp_path):
    (ws / "big.txt").write_text("x" * 5000)
    agent, _ = make_agent(ws, [{"tool_calls": [call("read_file", path="big.txt")]}, {"text": "read it"}],
                          tool_result_max_chars=300)
    path = tmp_path / "t.jsonl"
    with TraceWriter(path, {"workspace": str(ws), "protocol": "native"}) as writer:
        drive(agent.run("read big.txt", Answers()), writer)
    result = next(m for m in agent.history if m.role == "tool")
    assert len(result.content) < 500 and "more characters left out" in result.content
    assert read_trace(path).conversation() == agent.history


def test_a_format_1_trace_gives_back_its_prompts_and_answers(ws, tmp_path):
    path = tmp_path / "old.jsonl"
    records = [{"format": 1, "type": "trace_header", "workspace": str(ws)},
               {"type": "run_started", "run_id": "r1", "prompt": "hello", "model": "m", "protocol": "native",
                "workspace": str(ws)},
               {"type": "run_finished", "stop_reason": "done", "message": "done", "answer": "hi there"}]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    conversation = read_trace(path).conversation()
    assert [(m.role, m.content) for m in conversation] == [("user", "hello"), ("assistant", "hi there")]

"""Adversarial consent: approval bound to what is written, Ctrl-C/EOF/garbage at the question is no, no one to ask
means no (exit 3), "all" never covers protected or locked paths, hostile characters in paths are shown escaped, and
a reply cut off by the length limit writes nothing."""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Sequence
from pathlib import Path

import pytest
from agentkit import Answers, call, make_agent, run
from rich.console import Console

from cli_agent.cli.main import run as cli_run
from cli_agent.config.settings import Settings
from cli_agent.contracts.events import ApprovalAsked, Decision, StopReason, ToolResult
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import drive, open_session
from cli_agent.ui.view.approve import TerminalApprover, render_call

MUTATING = [("create_file", {"path": "new.txt", "content": "x\n"}), ("edit_file", {"path": "a.txt", "old": "a",
                                                                                     "new": "b"}),
            ("write_file", {"path": "a.txt", "content": "w\n"}), ("delete_file", {"path": "a.txt"})]


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    return tmp_path / "ws"


def results(events: Sequence[object]) -> list[ToolResult]:
    return [e for e in events if isinstance(e, ToolResult)]


# -- approval bound to content ---------------------------------------------------------------------------------

def test_what_was_approved_is_exactly_what_is_written(ws: Path) -> None:
    agent, _ = make_agent(ws, [{"tool_calls": [call("edit_file", path="./a.txt", old="a", new="approved"),
                                               call("create_file", path="sub/../n.txt", content="n\n")]},
                               {"text": "done"}], interactive=True)
    answers = Answers(Decision.YES, Decision.YES)
    events, finished = run(agent, "go", answers)
    assert finished.stop_reason is StopReason.DONE
    written = [r.change for r in results(events)]
    for asked, change in zip(answers.asked, written, strict=True):
        assert asked.change is not None and change is not None
        assert (asked.change.tool, asked.change.path, asked.change.digest) == (change.tool, change.path,
                                                                                change.digest)
        assert hashlib.sha256((ws / change.path).read_bytes()).hexdigest() == change.to_dict()["after_sha256"]
    assert [c.path for c in written if c] == ["a.txt", "n.txt"]  # the resolved path was shown, and written


def test_a_file_changed_on_disk_during_approval_is_refused_with_read_it_again(ws: Path) -> None:
    agent, provider = make_agent(ws, [{"tool_calls": [call("write_file", path="a.txt", content="agent\n")]},
                                      {"text": "ok"}], interactive=True)

    def meanwhile(asked: ApprovalAsked) -> Decision:
        (ws / "a.txt").write_text("the user typed this while the question was up\n")
        return Decision.YES

    events, _ = run(agent, "go", meanwhile)
    (result,) = results(events)
    assert not result.envelope.ok and "changed on disk since it was read; read it again" in result.envelope.errors[0]
    assert (ws / "a.txt").read_text() == "the user typed this while the question was up\n"
    assert "read it again" in (provider.requests[-1].messages[-1].content or "")


def test_a_file_swapped_for_a_link_out_during_approval_is_refused(ws: Path, tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("a\n")  # the same bytes as the file the agent read
    agent, _ = make_agent(ws, [{"tool_calls": [call("write_file", path="a.txt", content="agent\n")]},
                               {"text": "ok"}], interactive=True)

    def meanwhile(asked: ApprovalAsked) -> Decision:
        os.unlink(ws / "a.txt")
        os.symlink(tmp_path / "outside.txt", ws / "a.txt")
        return Decision.YES

    events, _ = run(agent, "go", meanwhile)
    assert not results(events)[0].envelope.ok
    assert (tmp_path / "outside.txt").read_text() == "a\n" and (ws / "a.txt").is_symlink()


def test_a_file_that_appears_during_approval_of_a_create_is_kept(ws: Path) -> None:
    agent, _ = make_agent(ws, [{"tool_calls": [call("create_file", path="n.txt", content="agent\n")]},
                               {"text": "ok"}], interactive=True)

    def meanwhile(asked: ApprovalAsked) -> Decision:
        (ws / "n.txt").write_text("someone else's\n")
        return Decision.YES

    events, _ = run(agent, "go", meanwhile)
    assert not results(events)[0].envelope.ok
    assert (ws / "n.txt").read_text() == "someone else's\n"


# -- the question ------------------------------------------------------------------------------------------------

def _raises(exc: type[BaseException]):  # type: ignore[no-untyped-def]
    def read(prompt: str) -> str:
        raise exc()
    return read


@pytest.mark.parametrize("read", [_raises(KeyboardInterrupt), _raises(EOFError), lambda p: "", lambda p: "garbage",
                                  lambda p: "yes please", lambda p: "\x1b[A", lambda p: "Y E S", lambda p: "ja",
                                  lambda p: "\x03", lambda p: "\x04", lambda p: "1"])
def test_ctrl_c_eof_and_garbage_at_the_question_are_no(ws: Path, read) -> None:  # type: ignore[no-untyped-def]
    approver = TerminalApprover(Console(file=io.StringIO()), read=read)
    agent, provider = make_agent(ws, [{"tool_calls": [call("write_file", path="a.txt", content="w\n"),
                                                      call("delete_file", path="a.txt")]}], interactive=True)
    _, finished = run(agent, "go", approver)
    assert finished.stop_reason is StopReason.DENIED and finished.exit_code == 3
    assert (ws / "a.txt").read_text() == "a\n"
    assert len(provider.requests) == 1  # the model is not asked again this turn, the second call never ran


@pytest.mark.parametrize(("tool", "arguments"), MUTATING)
def test_non_interactive_without_yes_denies_every_mutating_tool(ws: Path, capsys: pytest.CaptureFixture[str],
                                                                tool: str, arguments: dict[str, object]) -> None:
    provider = ScriptedProvider([{"tool_calls": [{"name": tool, "arguments": arguments}]}])
    task = f"go: {arguments['path']}"  # the task names the file, so it counts as read (edits need that)
    code = cli_run(["-C", str(ws), "-p", task, "--model", "x"], provider_factory=lambda s: provider)
    assert code == 3
    assert "--yes" in capsys.readouterr().err.splitlines()[-1]
    assert sorted(os.listdir(ws)) == ["a.txt"] and (ws / "a.txt").read_text() == "a\n"
    import json

    assert cli_run(["tools", "run", tool, json.dumps(arguments), "-C", str(ws)]) == 3
    assert sorted(os.listdir(ws)) == ["a.txt"] and (ws / "a.txt").read_text() == "a\n"


def test_all_never_covers_protected_or_locked_paths(ws: Path, tmp_path: Path) -> None:
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / "secrets.env").write_text("KEY=1\n")
    provider = ScriptedProvider([{"tool_calls": [
        {"name": "create_file", "arguments": {"path": "ok.txt", "content": "fine\n"}},
        {"name": "write_file", "arguments": {"path": ".git/HEAD", "content": "ref: refs/heads/evil\n"}}]},
        {"tool_calls": [
            {"name": "create_file", "arguments": {"path": ".cli-agent/config.toml", "content": "approval='all'\n"}},
            {"name": "edit_file", "arguments": {"path": "secrets.env", "old": "1", "new": "2"}},
            {"name": "create_file", "arguments": {"path": ".GIT/hooks/post-commit", "content": "rm -rf ~\n"}},
            {"name": "delete_file", "arguments": {"path": "SECRETS.ENV"}}]},
        {"text": "done"}])
    settings = Settings(model="scripted", workspace=str(ws), locks=["secrets.env"], trace=str(tmp_path / "t.jsonl"))
    session = open_session(settings, interactive=True, provider_factory=lambda s: provider)
    answers = Answers(Decision.ALL)
    events: list[object] = []
    try:
        drive(session.run("go", answers), events.append)
    finally:
        session.close()
    oks = [(r.tool, r.envelope.ok, " ".join(r.envelope.errors)) for r in results(events)]
    assert len(answers.asked) == 1 and oks[0][:2] == ("create_file", True)
    assert all(not ok and ("protected" in why or "locked" in why) for _, ok, why in oks[1:]), oks
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n" and not (ws / ".cli-agent").exists()
    assert (ws / "secrets.env").read_text() == "KEY=1\n" and not (ws / ".git" / "hooks").exists()


HOSTILE = "evil\x1b[31mRED\x1b[0m\r\u202egnp.exe\x07\u2066x\u2069.txt"


def test_ansi_cr_and_bidi_in_paths_are_shown_escaped(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    agent, _ = make_agent(ws, [{"tool_calls": [call("create_file", path=HOSTILE, content="hi\x1b[2J\n")]}],
                          interactive=True)
    answers = Answers(Decision.NO)
    run(agent, "go", answers)
    console = Console(record=True, width=200, file=io.StringIO(), color_system=None)
    console.print(render_call(answers.asked[0]))
    shown = console.export_text()
    for raw in ("\x1b", "\r", "\u202e", "\x07", "\u2066"):
        assert raw not in shown, repr(raw)
    assert "\\x1b[31mRED" in shown and "\\u202e" in shown and "\\x0d" in shown
    provider = ScriptedProvider([{"tool_calls": [{"name": "read_file", "arguments": {"path": HOSTILE}}]},
                                 {"text": "done"}])
    cli_run(["-C", str(ws), "-p", "go", "--model", "x"], provider_factory=lambda s: provider)
    out = capsys.readouterr()
    for raw in ("\x1b[31m", "\r", "\u202e", "\x07"):
        assert raw not in out.out + out.err, repr(raw)


def test_finish_reason_length_on_a_write_call_does_not_write(ws: Path) -> None:
    agent, _ = make_agent(ws, [{"tool_calls": [call("read_file", path="a.txt"),
                                               call("write_file", path="a.txt", content="half a fi")],
                                "finish_reason": "length"}, {"text": "ok"}], yes=True)
    events, _ = run(agent, "go")
    read, write = results(events)
    assert read.envelope.ok
    assert not write.envelope.ok and "finish_reason=length" in write.envelope.errors[0]
    assert (ws / "a.txt").read_text() == "a\n"

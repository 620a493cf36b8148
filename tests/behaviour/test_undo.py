"""`cli-agent undo [--turn N] [--list] [-C DIR]`, `tools run` journaling, and `/undo` in the REPL."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

import pytest
from rich.console import Console

from cli_agent.cli.main import run
from cli_agent.config.settings import Settings
from cli_agent.contracts.events import Decision
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import open_session
from cli_agent.ui.repl.repl import Repl

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "notes.md").write_bytes(b"# notes\r\nkeep me\r\n")
    os.chmod(root / "notes.md", 0o600)
    (root / "old.txt").write_text("old\n")
    return root


def calls(*items: tuple[str, Mapping[str, object]]) -> dict[str, object]:
    return {"tool_calls": [{"name": n, "arguments": a} for n, a in items]}


def one_shot(ws: Path, prompt: str, *replies: dict[str, object]) -> int:
    provider = ScriptedProvider(list(replies))
    return run(["-C", str(ws), "-p", prompt, "--model", "x", "--yes"], provider_factory=lambda s: provider)


def state(root: Path) -> dict[str, tuple[int, bytes]]:
    return {p.relative_to(root).as_posix(): (stat.S_IMODE(p.stat().st_mode), p.read_bytes())
            for p in sorted(root.rglob("*")) if p.is_file()}


def test_undo_reverts_the_last_turn_then_the_one_before(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    start = state(ws)
    edit = ("edit_file", {"path": "notes.md", "old": "keep me", "new": "kept"})
    assert one_shot(ws, "one (notes.md)", calls(edit,
                                     ("create_file", {"path": "src/new.py", "content": "x = 1\n"})),
                    {"text": "done"}) == 0
    middle = state(ws)
    assert one_shot(ws, "two", calls(("delete_file", {"path": "old.txt"}),
                                     ("write_file", {"path": "src/new.py", "content": "x = 2\n"})),
                    {"text": "done"}) == 0
    capsys.readouterr()
    assert run(["undo", "--list", "-C", str(ws)]) == 0
    listing = capsys.readouterr().out
    assert "turn 1" in listing and "turn 2" in listing
    for line in ("edit_file    edit   notes.md", "create_file  create src/new.py", "delete_file  delete old.txt",
                 "write_file   write  src/new.py"):
        assert line in listing
    assert run(["undo", "-C", str(ws)]) == 0
    assert capsys.readouterr().out == "undid turn 2: restored src/new.py; recreated old.txt\n"
    assert state(ws) == middle
    assert run(["undo", "-C", str(ws)]) == 0
    assert state(ws) == start and not (ws / "src").exists()
    assert run(["undo", "-C", str(ws)]) == 2
    assert "nothing to undo" in capsys.readouterr().err


def test_undo_turn_n_and_the_json_listing(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_shot(ws, "one", calls(("create_file", {"path": "a.txt", "content": "a"})), {"text": "ok"})
    one_shot(ws, "two", calls(("create_file", {"path": "b.txt", "content": "b"})), {"text": "ok"})
    assert run(["undo", "--turn", "1", "-C", str(ws)]) == 0
    assert not (ws / "a.txt").exists() and (ws / "b.txt").exists()
    capsys.readouterr()
    assert run(["undo", "--list", "--json", "-C", str(ws)]) == 0
    turns = json.loads(capsys.readouterr().out)
    assert [(t["turn"], t["undone"], [(c["tool"], c["kind"], c["path"]) for c in t["changes"]]) for t in turns] == [
        (1, True, [("create_file", "create", "a.txt")]), (2, False, [("create_file", "create", "b.txt")])]
    assert all(isinstance(c["time"], float) for t in turns for c in t["changes"])
    assert run(["undo", "--turn", "1", "-C", str(ws)]) == 2
    assert "undone already" in capsys.readouterr().err


def test_undo_refuses_naming_the_file_the_user_changed(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one_shot(ws, "go", calls(("write_file", {"path": "old.txt", "content": "agent\n"}),
                             ("create_file", {"path": "b.txt", "content": "b"})), {"text": "ok"})
    (ws / "old.txt").write_text("the user's edit\n")
    capsys.readouterr()
    assert run(["undo", "-C", str(ws)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["cli-agent: undo refused: old.txt changed since the agent wrote it (turn 1, write_file); "
                   "nothing was changed. Revert it by hand, or undo another turn"]
    assert (ws / "b.txt").exists() and (ws / "old.txt").read_text() == "the user's edit\n"


def test_an_empty_journal_and_a_folder_that_is_not_git(ws: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["undo", "--list", "-C", str(ws)]) == 0
    assert capsys.readouterr().out.strip() == "the undo journal of this workspace is empty"
    assert run(["undo", "-C", str(ws)]) == 2
    assert "nothing to undo" in capsys.readouterr().err
    assert not (ws / ".git").exists()


@pytest.mark.slow
def test_tools_run_writes_are_journaled_and_undone(ws: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, capture_output=True, text=True,
                              timeout=120)

    done = cli("tools", "run", "edit_file", json.dumps({"path": "notes.md", "old": "keep", "new": "KEEP"}), "-y",
               "-C", str(ws))
    assert done.returncode == 0, done.stderr
    assert (ws / "notes.md").read_bytes() == b"# notes\r\nKEEP me\r\n"
    assert state(ws)["notes.md"][0] == 0o600
    done = cli("undo", "-C", str(ws))
    assert (done.returncode, done.stdout) == (0, "undid turn 1: restored notes.md\n"), done.stderr
    assert (ws / "notes.md").read_bytes() == b"# notes\r\nkeep me\r\n"
    assert state(ws)["notes.md"][0] == 0o600


def test_a_journal_inside_the_workspace_is_protected(ws: Path, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("CLI_AGENT_HOME", str(ws / "home"))
    assert run(["tools", "run", "write_file", json.dumps({"path": "old.txt", "content": "x\n"}), "-y", "-C",
                str(ws)]) == 0
    (journal_file,) = (ws / "home" / "state" / "journal").glob("*/journal.jsonl")
    rel = journal_file.relative_to(ws).as_posix()
    capsys.readouterr()
    assert run(["tools", "run", "write_file", json.dumps({"path": rel, "content": "{}\n"}), "-y", "-C",
                str(ws)]) == 1
    assert "protected" in json.loads(capsys.readouterr().out)["errors"][0]
    assert run(["undo", "-C", str(ws)]) == 0 and (ws / "old.txt").read_text() == "old\n"


def test_slash_undo_in_the_repl(ws: Path, tmp_path: Path) -> None:
    provider = ScriptedProvider([calls(("edit_file", {"path": "old.txt", "old": "old", "new": "new"})),
                                 {"text": "edited"}, {"text": "noted"}])
    settings = Settings(model="scripted", workspace=str(ws), trace=str(tmp_path / "t.jsonl"))
    repl = Repl(open_session(settings, interactive=True, provider_factory=lambda s: provider),
                Console(record=True, width=200, color_system=None), lambda s: provider,
                approver=lambda asked: Decision.YES)
    try:
        assert "undo" in repl.commands.names()
        repl.run_turn("edit old.txt")
        assert (ws / "old.txt").read_text() == "new\n"
        repl.commands.dispatch(repl, "/undo list")
        repl.commands.dispatch(repl, "/undo")
        repl.commands.dispatch(repl, "/undo")
        repl.commands.dispatch(repl, "/undo x")
        out = repl.console.export_text()
        assert "edit_file    edit   old.txt" in out
        assert "undid turn 1: restored old.txt" in out
        assert "nothing to undo" in out and "usage: /undo [N|list]" in out
        assert (ws / "old.txt").read_text() == "old\n"
        repl.run_turn("what now?")  # the model is told, and the conversation stays valid
        last_request = provider.requests[-1].messages
        assert any("undid turn 1" in (m.content or "") for m in last_request if m.role == "user")
    finally:
        repl.session.close()

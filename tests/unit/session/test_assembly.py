"""One assembly of a session: `session.builder.assemble` makes the parts every front end stands on (the REPL, -p,
ACP, candidates through `open_session`; `mcp serve`; `cli-agent prompt`), and `journal_for` is the one place an
undo journal is opened."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from cli_agent.config.settings import Settings
from cli_agent.contracts.errors import UsageError
from cli_agent.contracts.messages import ToolCall
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.serve.mcp import FileToolServer
from cli_agent.session.builder import assemble, journal_for
from cli_agent.session.session import open_session
from cli_agent.tools.dispatch import Dispatcher

pytestmark = pytest.mark.usefixtures("isolated_home")

PACKAGE = Path(__file__).resolve().parents[3] / "cli_agent"


def _create(parts_dispatcher: Dispatcher, name: str) -> None:
    call = ToolCall(id="c1", name="create_file", arguments={"path": name, "content": "x\n"},
                    raw_arguments=json.dumps({"path": name, "content": "x\n"}))
    prepared = parts_dispatcher.prepare(call)
    assert prepared.error is None
    assert parts_dispatcher.execute(prepared).ok


def test_a_journaled_assembly_records_each_write_before_it_lands(ws: Path) -> None:
    parts = assemble(Settings(model="scripted", workspace=str(ws)), journal=True)
    assert parts.journal is not None
    parts.journal.begin_turn("s1", "make a")
    _create(parts.dispatcher(), "a.txt")
    assert (ws / "a.txt").read_text() == "x\n"
    assert [turn.number for turn in journal_for(ws).turns()] == [1]


def test_an_assembly_without_a_journal_writes_nothing_to_one(ws: Path) -> None:
    parts = assemble(Settings(model="scripted", workspace=str(ws)))
    assert parts.journal is None
    _create(parts.dispatcher(), "a.txt")
    assert journal_for(ws).turns() == []


def test_without_commands_run_command_is_not_offered(ws: Path) -> None:
    parts = assemble(Settings(model="scripted", workspace=str(ws)), commands=False)
    assert parts.commands is None
    assert "run_command" not in parts.registry.names()
    assert "read_file" in parts.registry.names()


def test_no_model_configured_means_the_bundled_one_with_a_note(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.providers.local.provider import KEY_VARIABLES

    for key in KEY_VARIABLES:
        monkeypatch.delenv(key, raising=False)
    parts = assemble(Settings(workspace=str(ws)), commands=False)
    assert parts.settings.model == "local"
    assert any("bundled local model" in note for note in parts.notes)


def test_a_broad_folder_is_refused_only_where_the_tools_may_write(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = Settings(model="scripted", workspace=str(tmp_path))
    with pytest.raises(UsageError, match="your home folder"):
        assemble(settings, commands=False)
    assert assemble(settings, commands=False, writes=False).workspace.root == tmp_path.resolve()


def test_a_session_and_mcp_serve_record_in_the_same_journal(ws: Path) -> None:
    settings = Settings(model="scripted", workspace=str(ws), trace=str(ws.parent / "t.jsonl"))
    session = open_session(settings, interactive=False, provider_factory=lambda s: ScriptedProvider([]))
    try:
        server = FileToolServer(settings)
        assert session.journal is not None
        assert session.journal.file == server.journal.file == journal_for(ws).file
    finally:
        session.close()


def test_only_the_builder_opens_a_journal() -> None:
    """`Journal(...)` is called in one module of the product: a front end asks `journal_for` for one."""
    callers = set()
    for module in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Journal":
                callers.add(module.relative_to(PACKAGE).as_posix())
    assert callers == {"session/builder.py"}

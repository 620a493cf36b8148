"""Locks: globs from facts.toml `[locks] paths` and config `locks` that no approval mode can write; reads stay open."""

from __future__ import annotations

import json

import pytest

from cli_agent.cli.main import run
from cli_agent.config.settings import Settings
from cli_agent.contracts.envelope import ToolError
from cli_agent.facts.store import workspace_for
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "docs" / "api").mkdir(parents=True)
    (root / "docs" / "guide.md").write_text("guide\n")
    (root / "docs" / "api" / "ref.md").write_text("ref\n")
    (root / "poetry.lock").write_text("lock\n")
    (root / "app.py").write_text("print('hi')\n")
    return root


def lock_in_facts(root, *globs):
    (root / ".cli-agent").mkdir(exist_ok=True)
    (root / ".cli-agent" / "facts.toml").write_text(f"[locks]\npaths = {json.dumps(list(globs))}\n")


def lock_in_config(root, *globs):
    (root / ".cli-agent").mkdir(exist_ok=True)
    (root / ".cli-agent" / "config.toml").write_text(f"locks = {json.dumps(list(globs))}\n")


def tool(ws, name, arguments, *extra):
    return run(["tools", "run", name, json.dumps(arguments), "-C", str(ws), *extra])


@pytest.mark.parametrize(("glob", "path", "locked"), [
    ("docs/**", "docs/guide.md", True),
    ("docs/**", "docs/api/ref.md", True),
    ("docs/**", "docs/new.md", True),
    ("docs/**", "docsx/guide.md", False),
    ("docs/**", "src/docs/guide.md", False),
    ("docs/", "docs/api/ref.md", True),
    ("*.lock", "poetry.lock", True),
    ("*.lock", "sub/Cargo.lock", True),
    ("*.lock", "lockfile.txt", False),
    ("/app.py", "app.py", True),
    ("/app.py", "src/app.py", False),
    ("src/*.py", "src/a.py", True),
    ("src/*.py", "src/deep/a.py", False),
    ("secrets/**", "SECRETS/key.txt", True),  # case-insensitive, like protected paths
])
def test_glob_forms(tmp_path, glob, path, locked):
    root = tmp_path / "g"
    root.mkdir()
    workspace = workspace_for(Settings(workspace=str(root), locks=[glob]))
    if locked:
        with pytest.raises(ToolError, match=rf"locked by the user \(lock '{glob.replace('*', '[*]')}'\)"):
            workspace.check_writable(path)
    else:
        assert workspace.check_writable(path) == path


def test_locks_from_facts_and_config_both_hold(ws):
    lock_in_facts(ws, "docs/**")
    lock_in_config(ws, "*.lock")
    from cli_agent.config.loading import load_settings

    workspace = workspace_for(load_settings({"workspace": str(ws)}).settings)
    for path in ("docs/guide.md", "poetry.lock"):
        with pytest.raises(ToolError, match="locked"):
            workspace.check_writable(path)
    assert workspace.check_writable("app.py") == "app.py"


def test_a_locked_path_refuses_under_yes_through_the_real_cli(ws, tmp_path, capsys):
    lock_in_facts(ws, "docs/**")
    provider = ScriptedProvider([
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "docs/guide.md", "old": "guide", "new": "x"}}]},
        {"text": "It is locked; I left it."}])
    trace = tmp_path / "t.jsonl"
    code = run(["-C", str(ws), "-p", "change the guide", "--model", "x", "--yes", "-o", "json", "--trace", str(trace)],
               provider_factory=lambda s: provider)
    report = json.loads(capsys.readouterr().out)
    # the model's last change failed and it answered: not a success (exit 7, the failed change named)
    assert code == 7 and report["files_changed"] == [] and report["tool_calls"][0]["ok"] is False
    assert report["failed_change"]["arguments"]["path"] == "docs/guide.md"
    assert (ws / "docs" / "guide.md").read_text() == "guide\n"
    result = next(e for e in read_trace(trace).events if e.type == "tool_result")
    assert "locked by the user (lock 'docs/**')" in result.envelope.errors[0]
    assert "lock 'docs/**'" in provider.requests[1].messages[-1].content  # the model is told which lock


@pytest.mark.parametrize("extra", [["--yes"], []])
def test_tools_run_refuses_a_locked_write_whatever_the_approval(ws, capsys, extra):
    lock_in_config(ws, "*.lock")
    if not extra:
        (ws / ".cli-agent" / "config.toml").write_text('locks = ["*.lock"]\napproval = "all"\n')
    assert tool(ws, "write_file", {"path": "poetry.lock", "content": "new\n"}, *extra) == 1
    envelope = json.loads(capsys.readouterr().out)
    assert not envelope["ok"] and "lock '*.lock'" in envelope["errors"][0]
    assert tool(ws, "delete_file", {"path": "poetry.lock"}, *extra) == 1
    assert (ws / "poetry.lock").read_text() == "lock\n"


@pytest.mark.slow
def test_reading_a_locked_path_still_works(ws, capsys):
    lock_in_facts(ws, "docs/**", "*.lock")
    assert tool(ws, "read_file", {"path": "docs/guide.md"}) == 0
    assert json.loads(capsys.readouterr().out)["data"]["content"].startswith("guide")
    assert tool(ws, "search", {"pattern": "lock", "path": "."}) == 0
    assert "poetry.lock" in capsys.readouterr().out


@pytest.mark.parametrize("path", [".cli-agent/facts.toml", ".cli-agent/config.toml", ".cli-agent/facts.draft.toml",
                                  ".CLI-AGENT/facts.toml"])
def test_the_agents_own_files_are_locked_by_default(ws, capsys, path):
    lock_in_config(ws)
    lock_in_facts(ws)
    assert tool(ws, "create_file", {"path": path, "content": "locks = []\n"}, "--yes") == 1
    envelope = json.loads(capsys.readouterr().out)
    assert "protected" in envelope["errors"][0]
    assert tool(ws, "write_file", {"path": ".cli-agent/facts.toml", "content": "[locks]\n"}, "--yes") == 1
    assert (ws / ".cli-agent" / "facts.toml").read_text() == "[locks]\npaths = []\n"


def test_the_user_config_file_is_protected_when_it_lies_in_the_workspace(ws, monkeypatch, capsys):
    monkeypatch.setenv("CLI_AGENT_HOME", str(ws / "home"))
    (ws / "home" / "config").mkdir(parents=True)
    (ws / "home" / "config" / "config.toml").write_text("max_steps = 5\n")
    assert tool(ws, "write_file", {"path": "home/config/config.toml", "content": "max_steps = 99\n"}, "--yes") == 1
    assert "protected" in json.loads(capsys.readouterr().out)["errors"][0]
    assert (ws / "home" / "config" / "config.toml").read_text() == "max_steps = 5\n"
    assert tool(ws, "create_file", {"path": "home/config/other.toml", "content": "x\n"}, "--yes") == 1  # the dir too


def test_an_explicit_config_file_in_the_workspace_is_protected(ws, monkeypatch, capsys):
    (ws / "agent.toml").write_text("max_steps = 5\n")
    monkeypatch.setenv("CLI_AGENT_CONFIG", str(ws / "agent.toml"))
    assert tool(ws, "edit_file", {"path": "agent.toml", "old": "5", "new": "50"}, "--yes") == 1
    assert (ws / "agent.toml").read_text() == "max_steps = 5\n"

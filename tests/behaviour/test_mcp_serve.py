"""`cli-agent mcp serve`, driven by the `mcp` SDK's own client over stdio: the file tools with their schemas, the
sandbox (confinement, locks, protected paths), headless approval, and the undo journal."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import anyio
import pytest

pytestmark = pytest.mark.usefixtures("isolated_home")


def serve(ws: Path, *flags: str):
    """`cli-agent mcp serve -C ws FLAGS` as a function running `body(client)` against it (the SDK's client)."""
    from mcp import Client, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(command=sys.executable, args=["-m", "cli_agent", "mcp", "serve", "-C", str(ws),
                                                                *flags],
                                   env={k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON"))})

    async def session(body):
        with (ws.parent / "serve.log").open("a") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as client:
                return await body(client)

    return lambda body: anyio.run(session, body)


def envelope(result) -> dict:
    assert json.loads(result.content[0].text) == result.structured_content
    return result.structured_content


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("hello\n")
    return root


@pytest.mark.slow
def test_the_file_tools_are_listed_with_their_specs_and_read_only_ones_run(ws):
    async def body(client):
        listed = await client.list_tools()
        read = await client.call_tool("read_file", {"path": "a.txt"})
        outside = await client.call_tool("read_file", {"path": "../outside.txt"})
        bad = await client.call_tool("read_file", {"nope": 1})
        return listed, read, outside, bad

    listed, read, outside, bad = serve(ws)(body)
    tools = {t.name: t for t in listed.tools}
    assert {"list_files", "read_file", "search", "create_file", "edit_file", "write_file", "delete_file"} <= set(tools)
    assert "propose_fact" not in tools
    assert tools["read_file"].annotations.read_only_hint and not tools["edit_file"].annotations.read_only_hint
    assert tools["read_file"].input_schema["required"] == ["path"]
    assert not read.is_error and "hello" in json.dumps(envelope(read)["data"])
    assert outside.is_error and not envelope(outside)["ok"]
    assert bad.is_error and "missing required argument: 'path'" in " ".join(envelope(bad)["errors"])


@pytest.mark.slow
def test_a_change_is_refused_headless_unless_started_with_yes(ws):
    async def body(client):
        return await client.call_tool("edit_file", {"path": "a.txt", "old": "hello", "new": "bye"})

    refused = serve(ws)(body)
    assert refused.is_error and "needs approval" in envelope(refused)["errors"][0]
    assert "--yes" in envelope(refused)["errors"][0]
    assert (ws / "a.txt").read_text() == "hello\n"
    edited = serve(ws, "--approval", "edits")(body)
    assert not edited.is_error and (ws / "a.txt").read_text() == "bye\n"


@pytest.mark.slow
def test_locks_and_protected_paths_hold_and_a_change_can_be_undone(ws, capsys):
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text('locks = ["locked/**"]\n')
    (ws / "locked").mkdir()
    (ws / "locked" / "x.txt").write_text("keep\n")

    async def body(client):
        locked = await client.call_tool("write_file", {"path": "locked/x.txt", "content": "changed"})
        protected = await client.call_tool("write_file", {"path": ".cli-agent/config.toml", "content": "yes = true"})
        created = await client.call_tool("create_file", {"path": "new.txt", "content": "new\n"})
        return locked, protected, created

    locked, protected, created = serve(ws, "--yes")(body)
    assert locked.is_error and (ws / "locked" / "x.txt").read_text() == "keep\n"
    assert protected.is_error and "yes = true" not in (ws / ".cli-agent" / "config.toml").read_text()
    assert not created.is_error and (ws / "new.txt").read_text() == "new\n"
    from cli_agent.cli.main import run

    assert run(["undo", "-C", str(ws)]) == 0
    assert not (ws / "new.txt").exists()


@pytest.mark.parametrize("syntax_check", [True, False])
def test_the_server_builds_its_tools_as_a_session_does(ws, syntax_check):
    """The same builder as the CLI's sessions (`session.builder`): the config's syntax_check holds (a change that
    breaks a .py file is refused unless it is off), an edit needs no read first, and the policy weighs the call by
    its kind of change (`--approval edits` allows an edit, not a delete)."""
    from cli_agent.config.settings import Settings
    from cli_agent.serve.mcp import FileToolServer

    (ws / "m.py").write_text("x = 1\n")
    server = FileToolServer(Settings(workspace=str(ws), approval="edits", syntax_check=syntax_check))
    broken = server.call("edit_file", {"path": "m.py", "old": "x = 1", "new": "x = ("})
    assert broken.ok is not syntax_check and (ws / "m.py").read_text() == ("x = 1\n" if syntax_check else "x = (\n")
    assert server.call("edit_file", {"path": "a.txt", "old": "hello", "new": "bye"}).ok  # unread, allowed
    deleted = server.call("delete_file", {"path": "a.txt"})
    assert not deleted.ok and "needs approval" in deleted.errors[0] and (ws / "a.txt").read_text() == "bye\n"

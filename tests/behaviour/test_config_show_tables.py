"""`cli-agent config show` lists the hooks, MCP servers and agent types in force, each with the file it came from
(an MCP server's env values masked), and names an untrusted folder's hooks as ignored: the output stays TOML."""

from __future__ import annotations

import tomllib

import pytest
from clikit import cli, user_config

pytestmark = pytest.mark.slow

USER = """[[hooks]]
event = "before_tool"
match = "run_command"
command = "grep -q 'rm ' && exit 2 || exit 0"

[mcp_servers.docs]
command = "docs-server"
env = { DOCS_TOKEN = "sk-1234567890abcdef" }

[agents.fixer]
description = "Makes small fixes"
tools = ["read_file", "edit_file"]
"""


def test_config_show_lists_hooks_servers_and_agents_with_their_files(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, USER)
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text('[[hooks]]\nevent = "prompt"\ncommand = "touch pwned"\n')
    done = cli(["config", "show", "-C", str(ws)], home=home)
    assert done.returncode == 0, done.stderr
    shown = tomllib.loads(done.stdout)
    assert shown["hooks"] == [{"event": "before_tool", "match": "run_command", "timeout_s": 60.0,
                               "command": "grep -q 'rm ' && exit 2 || exit 0"}]
    assert shown["mcp_servers"]["docs"]["command"] == "docs-server" and "sk-1234567890abcdef" not in done.stdout
    assert shown["agents"]["fixer"]["tools"] == ["read_file", "edit_file"]
    assert "[[hooks]]  # user config" in done.stdout and "[mcp_servers.\"docs\"]  # user config (" in done.stdout
    assert "# note: not running the 1 hook(s) of the untrusted project config" in done.stdout


def test_a_projects_web_table_is_said_to_be_for_the_user_config_only(tmp_path, ws):
    import json

    home = tmp_path / "home"
    user_config(home, "")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("[web]\nallow_private = true\n")
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "ok"}]))
    done = cli(["-C", str(ws), "-p", "hi", "--model", f"scripted:{script}", "--output", "json"], home=home)
    (note,) = [n for n in json.loads(done.stdout)["notes"] if "allow_private" in n]
    assert "(only your user config may set them)" in note and "--config" not in note, note

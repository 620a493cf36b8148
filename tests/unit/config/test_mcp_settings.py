"""`[mcp_servers.NAME]`: what the config accepts, a bad table as one line and exit 2, and which file may set what."""

from __future__ import annotations

import pytest

from cli_agent.cli.main import run
from cli_agent.config.loading import load_settings
from cli_agent.config.mcp_settings import McpServer, merge_servers

pytestmark = pytest.mark.usefixtures("isolated_home")


def user_config(home, text):
    (home / "config").mkdir(parents=True, exist_ok=True)
    (home / "config" / "config.toml").write_text(text)


def test_stdio_and_http_servers_load_with_their_defaults(isolated_home, tmp_path):
    user_config(isolated_home, '[mcp_servers.git]\ncommand = "mcp-server-git"\nargs = ["-r", "."]\n'
                               'env = { A = "1" }\ntools = ["git_status"]\napproval = { git_status = "never" }\n'
                               '[mcp_servers.docs]\nurl = "https://example.test/mcp"\nheaders = { X = "y" }\n'
                               'timeout_s = 5\nenabled = false\n')
    servers = load_settings({}, workspace=tmp_path).settings.mcp_servers
    git, docs = servers["git"], servers["docs"]
    assert git.transport == "stdio" and git.timeout_s == 60 and git.enabled
    assert git.allows("git_status") and not git.allows("git_commit")
    assert git.approval_for("git_status") == "never" and git.approval_for("git_log") == "ask"
    assert docs.transport == "http" and not docs.enabled and docs.approval_for("anything") == "ask"
    assert git.origin.startswith("user config")


@pytest.mark.parametrize(("table", "message"), [
    ('command = "a"\nurl = "http://x"', "give either command"),
    ('args = ["x"]', "give either command"),
    ('url = "ftp://x"', "url must start with http:// or https://"),
    ('url = "http://x"\nargs = ["a"]', "args, env and cwd are for a stdio server"),
    ('command = "a"\nheaders = { A = "b" }', "headers are for a streamable HTTP server"),
    ('command = "a"\ntimeout_s = 0', ":3: mcp_servers.s.timeout_s: expected a value greater than 0, found integer 0"),
    ('command = "a"\napproval = "always"', 'approval must be "ask" or "never"'),
    ('command = "a"\napproval = { t = "yes" }', 'approval must be "ask" or "never"'),
    ('command = "a"\ncolour = "red"', ":3: mcp_servers.s.colour: unknown key (expected one of: command, args, "),
    ('command = 3', ":2: mcp_servers.s.command: expected a string, found integer 3"),
])
def test_a_bad_server_table_is_one_line_and_exit_2(table, message, isolated_home, capsys):
    user_config(isolated_home, f"[mcp_servers.s]\n{table}\n")
    assert run(["mcp", "list"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    config = isolated_home / "config" / "config.toml"
    assert len(err) == 1 and message in err[0] and str(config) in err[0], err


@pytest.mark.parametrize("name", ["a b", "a__b", "-x", "x" * 33])
def test_a_server_name_that_cannot_prefix_tool_names_is_refused(name, isolated_home, capsys):
    user_config(isolated_home, f'[mcp_servers."{name}"]\ncommand = "a"\n')
    assert run(["mcp", "list"]) == 2
    assert "server name" in capsys.readouterr().err


def test_approval_counts_only_from_the_user_config_and_project_servers_need_trust():
    server = McpServer(command="a", approval="never")
    merged, notes = merge_servers([("--config (x.toml)", {"s": server})], project_trusted=False)
    assert merged["s"].approval == "ask" and "only your user config" in notes[0]
    merged, notes = merge_servers([("project config (p)", {"s": server})], project_trusted=False)
    assert merged == {} and "untrusted" in notes[0]
    merged, notes = merge_servers([("project config (p)", {"s": server})], project_trusted=True)
    assert merged["s"].approval == "ask" and merged["s"].origin == "project config (p)"
    user = McpServer(command="user-one", approval="never")
    merged, notes = merge_servers([("user config (u)", {"s": user}), ("project config (p)", {"s": server})],
                                  project_trusted=True)
    assert merged["s"].command == "a" and merged["s"].approval == "ask"  # the user's "never" is not carried over

"""A tool's facts come from its spec: every packaged spec states its kind, whether it mutates, its verb; and what the
front ends show for each built-in tool is what their own tables of names said before the spec held these facts
(the ACP kinds, the transcript's verbs, the read-only tools a replay compares, MCP serve's destructive hint, the
files a resumed session lists) — except the entries that had drifted, which are now right."""

from __future__ import annotations

import tomllib
import typing

import pytest
from acp import schema

from cli_agent.tools.registry import Registry
from cli_agent.tools.specs import KINDS, builtin_spec_dir

# The tables as they stood, copied by hand from the modules that held them.
OLD_ACP_KINDS = {
    "read_file": "read", "list_files": "search", "search": "search", "create_file": "edit", "edit_file": "edit",
    "write_file": "edit", "insert_text": "edit", "delete_file": "delete", "rename_file": "move",
    "run_command": "execute", "propose_fact": "think", "web_fetch": "fetch", "update_plan": "think", "task": "think",
}
DRIFTED_ACP_KINDS = {"replace_lines": "edit", "replace_definition": "edit"}  # were "other": the table lacked them
OLD_VERBS = {"read_file": "Read", "list_files": "List", "search": "Search", "propose_fact": "Propose",
             "update_plan": "Plan", "task": "Task", "web_fetch": "Fetch"}
OLD_REPLAY_COMPARED = {"list_files", "read_file", "search"}
OLD_DESTRUCTIVE = {"delete_file", "write_file"}
OLD_RESUME_WRITERS = {"create_file", "edit_file", "write_file", "delete_file", "rename_file"}
DRIFTED_RESUME_WRITERS = {"insert_text", "replace_lines", "replace_definition"}  # the table lacked them
FACTS = ("kind", "mutates", "verb")


def _files():
    return sorted((f for f in builtin_spec_dir().iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)


@pytest.mark.parametrize("file", _files(), ids=lambda f: f.name)
def test_every_packaged_spec_states_its_facts(file):
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    missing = [fact for fact in FACTS if fact not in data]
    assert not missing, f"{file.name} lacks {missing}"
    assert data["kind"] in KINDS and isinstance(data["mutates"], bool) and data["verb"].strip()


def test_the_kinds_are_the_protocols():
    assert set(KINDS) == set(typing.get_args(schema.ToolKind))


def test_acp_kinds_are_the_old_tables_and_the_drifted_ones_are_right():
    from cli_agent.serve.acp.updates import tool_kind

    builtin = Registry.builtin()
    assert {name: tool_kind(name) for name in builtin.names()} == {**OLD_ACP_KINDS, **DRIFTED_ACP_KINDS}
    assert tool_kind("git__status") == "other"


def test_the_transcript_shows_the_old_verbs_and_folds_the_same_tools():
    from cli_agent.ui.view.transcript import changes_nothing, verb_of

    builtin = Registry.builtin()
    assert {name: verb_of(name) for name in builtin.names() if changes_nothing(name)} == OLD_VERBS
    assert verb_of("git__status") == "git__status" and not changes_nothing("git__status")


def test_replay_compares_the_data_of_the_same_tools():
    from cli_agent.replay import compare

    assert {name for name in Registry.builtin().names() if compare._finds(name)} == OLD_REPLAY_COMPARED


def test_mcp_serve_marks_the_same_tools_destructive():
    from cli_agent.serve.mcp import _tool

    builtin = Registry.builtin()
    hints = {name: _tool(builtin.get(name)).annotations for name in builtin.names()}
    assert {name for name, a in hints.items() if a.destructive_hint} == OLD_DESTRUCTIVE
    assert {name for name, a in hints.items() if a.read_only_hint} == {
        name for name in builtin.names() if not builtin.get(name).mutates}


def test_a_resumed_session_lists_the_files_of_every_tool_that_writes_one():
    from cli_agent.ui.view import resume_view

    writers = {name for name in Registry.builtin().names() if resume_view._writes_files(name)}
    assert writers - {"run_command"} == OLD_RESUME_WRITERS | DRIFTED_RESUME_WRITERS


def test_an_mcp_tool_is_read_when_its_server_says_so_else_other():
    from mcp_types import Tool, ToolAnnotations

    from cli_agent.config.mcp_settings import McpServer
    from cli_agent.mcp.tools import spec_for
    from cli_agent.serve.acp.updates import tool_kind

    server = McpServer(command="demo")
    reader = spec_for("git", server, Tool(name="status", input_schema={"type": "object"},
                                          annotations=ToolAnnotations(read_only_hint=True)))
    plain = spec_for("git", server, Tool(name="commit", input_schema={"type": "object"}))
    assert not isinstance(reader, str) and not isinstance(plain, str)
    assert (reader.kind, reader.verb, reader.mutates) == ("read", "git__status", False)
    assert (plain.kind, plain.verb) == ("other", "git__commit")
    session = Registry([reader, plain], {})
    assert tool_kind("git__status", session) == "read" and tool_kind("git__commit", session) == "other"
    assert tool_kind("read_file", session) == "read"  # a built-in tool the session's registry lacks

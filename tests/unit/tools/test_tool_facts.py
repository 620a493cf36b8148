"""A tool's facts live in its spec, and every front end shows them from there: for each packaged spec, whatever its
name, ACP's tool kind, the transcript's verb and one-line fold, `mcp serve`'s hints and which tools it serves, what
a replay compares and plays back, and the files a resumed session lists all follow from the spec's fields. The
specs come from the product's own loader, so this file names no built-in tool: a new tool is checked here the day
its spec is written, and needs nothing added to pass."""

from __future__ import annotations

import tomllib
import typing
from pathlib import Path

import pytest
from acp import schema

from cli_agent.contracts import ApprovalAsked, Envelope, ToolCall, ToolCallsProposed, ToolResult
from cli_agent.tools.registry import Registry
from cli_agent.tools.specs import KINDS, ToolSpec, builtin_spec_dir

SPECS = Registry.builtin().specs()
FACTS = ("kind", "mutates", "verb")
# The kinds that say what a call does to the files: a spec's `mutates` has to agree with them.
WRITES, READS = ("edit", "delete", "move"), ("read", "search", "fetch", "think")
ROOT = Path("/workspace")


def _files():
    return sorted((f for f in builtin_spec_dir().iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)


def _call(spec: ToolSpec, **arguments) -> ToolCall:
    return ToolCall(id="c1", name=spec.name, arguments=arguments)


def _result(spec: ToolSpec, data: object) -> ToolResult:
    return ToolResult("c1", spec.name, Envelope.success(data))


@pytest.mark.parametrize("file", _files(), ids=lambda f: f.name)
def test_every_packaged_spec_states_its_facts(file):
    data = tomllib.loads(file.read_text(encoding="utf-8"))
    missing = [fact for fact in FACTS if fact not in data]
    assert not missing, f"{file.name} lacks {missing}"
    assert data["kind"] in KINDS and isinstance(data["mutates"], bool) and data["verb"].strip()


def test_the_kinds_are_the_protocols():
    assert set(KINDS) == set(typing.get_args(schema.ToolKind))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_specs_kind_agrees_with_whether_it_mutates(spec):
    assert spec.kind not in WRITES or spec.mutates, f"kind {spec.kind!r} changes files: mutates must be true"
    assert spec.kind not in READS or not spec.mutates, f"kind {spec.kind!r} changes no file: mutates must be false"


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_acp_shows_the_specs_kind(spec):
    from cli_agent.serve.acp.updates import permission_call, tool_call_start, tool_kind

    call = _call(spec)
    assert tool_call_start(call, ROOT).kind == spec.kind
    assert permission_call(ApprovalAsked(call=call, change=None, index=1, total=1), ROOT).kind == spec.kind
    session = Registry([], {})  # a session's registry that lacks the tool (only MCP tools): the spec still says
    assert tool_kind(spec.name, session) == spec.kind


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_the_transcript_shows_the_specs_verb_and_folds_what_changes_nothing(spec):
    from cli_agent.ui.view.transcript import call_label, changes_nothing, verb_of

    assert verb_of(spec.name) == spec.verb
    assert call_label(_call(spec), spec.name).plain == spec.verb
    assert changes_nothing(spec.name) == (not spec.mutates)


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_mcp_serve_gives_the_specs_hints(spec):
    from cli_agent.serve.mcp import _tool

    tool = _tool(spec)
    assert (tool.name, tool.description, tool.input_schema) == (spec.name, spec.description, spec.parameters)
    hints = tool.annotations
    assert hints.read_only_hint == (not spec.mutates) and hints.idempotent_hint == (not spec.mutates)
    assert hints.destructive_hint == spec.destructive


@pytest.mark.usefixtures("isolated_home")  # the server opens an undo journal
def test_mcp_serve_serves_the_exposed_specs_of_its_categories(tmp_path):
    from cli_agent.config import Settings
    from cli_agent.serve.mcp import SERVED_CATEGORIES, FileToolServer

    served = FileToolServer(Settings(workspace=str(tmp_path))).specs
    assert served == [s for s in SPECS if s.category in SERVED_CATEGORIES and s.exposed_to_model]


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_replay_compares_the_data_of_the_specs_that_read_the_workspace(spec):
    """A replayed result whose data differs from the recording's diverges when the spec's kind is read or search
    (a faithful replay finds the same data again); any other tool's data is not compared."""
    from cli_agent.replay.compare import Comparator

    comparator = Comparator(1, [_result(spec, {"seen": "recorded"})], {}, "/original", "/copy")
    comparator(_result(spec, {"seen": "replayed"}))
    comparator.finish()
    assert (comparator.divergence is not None) == (spec.kind in ("read", "search"))


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_replay_plays_back_the_specs_that_run_a_command(spec):
    """A call of a tool whose spec runs a command is answered from the trace (unless --run-commands), never run."""
    from cli_agent.history import Trace
    from cli_agent.replay.engine import _with_recorded_commands

    call = _call(spec)
    trace = Trace({}, (ToolCallsProposed(calls=(call,)), _result(spec, {"exit_code": 0})))
    registry, played = _with_recorded_commands(Registry.builtin(), trace)
    assert played == ({call.id} if spec.runs_command else set())
    if spec.runs_command:
        replayed = registry.get(spec.name)
        assert not replayed.runs_command and not replayed.mutates and replayed.requires_approval


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_a_resumed_session_lists_the_file_a_mutating_spec_was_called_with(spec):
    from cli_agent.ui.view.resume_view import _changed

    run = [ToolCallsProposed(calls=(_call(spec, path="f.txt"),)), _result(spec, {})]
    assert _changed(run) == (["f.txt"] if spec.mutates else [])


def test_an_mcp_tool_is_read_when_its_server_says_so_else_other():
    from mcp_types import Tool, ToolAnnotations

    from cli_agent.config.mcp_settings import McpServer
    from cli_agent.mcp.tools import spec_for
    from cli_agent.serve.acp.updates import tool_kind
    from cli_agent.ui.view.transcript import changes_nothing, verb_of

    server = McpServer(command="demo")
    reader = spec_for("git", server, Tool(name="status", input_schema={"type": "object"},
                                          annotations=ToolAnnotations(read_only_hint=True)))
    plain = spec_for("git", server, Tool(name="commit", input_schema={"type": "object"}))
    assert not isinstance(reader, str) and not isinstance(plain, str)
    assert (reader.kind, reader.verb, reader.mutates) == ("read", "git__status", False)
    assert (plain.kind, plain.verb) == ("other", "git__commit")
    session = Registry([reader, plain], {})
    assert tool_kind("git__status", session) == "read" and tool_kind("git__commit", session) == "other"
    assert tool_kind("git__status") == "other"  # a tool neither the session nor the built-ins know
    assert verb_of("git__status") == "git__status" and not changes_nothing("git__status")

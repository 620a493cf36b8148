"""The registry: lookups, category order, which tools the model is offered."""

from __future__ import annotations

import pytest

from cli_agent.contracts.errors import CliAgentError, SpecError, UsageError
from cli_agent.tools.handlers import handlers
from cli_agent.tools.registry import Registry
from cli_agent.tools.specs import ToolSpec, builtin_spec_dir, load_specs

ALL = frozenset({"list_files", "read_file", "search", "create_file", "edit_file", "write_file", "delete_file",
                 "insert_text", "propose_fact", "rename_file", "run_command", "replace_lines", "replace_definition",
                 "web_fetch", "update_plan", "task"})


def _noop(ctx, **arguments): ...


def _registry(*extra: ToolSpec, without: frozenset[str] = frozenset()) -> Registry:
    """The packaged specs (plus `extra`) with stand-in handlers for every tool but those `without`."""
    specs = [*load_specs([builtin_spec_dir()], handlers()), *extra]
    return Registry(specs, {s.name: _noop for s in specs if s.name not in without})


def _spec(name: str, **fields) -> ToolSpec:
    base = {"category": "Misc", "description": "A tool.", "parameters": {"type": "object", "properties": {}},
            "mutates": False, "kind": "other", "verb": name}
    return ToolSpec(name=name, **{**base, **fields})


def test_names_and_categories_are_ordered():
    registry = _registry()
    assert registry.categories() == ["Explore", "Edit", "Run", "Project knowledge", "Plan and delegate"]
    assert registry.names() == ["list_files", "read_file", "search", "web_fetch", "create_file", "delete_file",
                                "edit_file", "insert_text", "rename_file", "replace_definition", "replace_lines",
                                "write_file", "run_command", "propose_fact", "task", "update_plan"]
    assert [s.name for s in registry.by_category("Explore")] == ["list_files", "read_file", "search", "web_fetch"]
    assert len(registry) == 16 and "search" in registry and "grep" not in registry
    assert _registry(_spec("zz", category="Alpha")).categories()[-1] == "Alpha"


def test_unknown_tool_lists_the_available_ones():
    registry = _registry()
    with pytest.raises(UsageError) as info:
        registry.get("grep")
    assert str(info.value) == ("unknown tool 'grep'; available tools: list_files, read_file, search, web_fetch, "
                               "create_file, delete_file, edit_file, insert_text, rename_file, replace_definition, "
                               "replace_lines, write_file, run_command, propose_fact, task, update_plan")
    with pytest.raises(UsageError, match="available tools"):
        registry.handler("grep")


def test_handler_lookup():
    registry = _registry(without=frozenset({"propose_fact"}))
    assert registry.handler("read_file") is _noop
    with pytest.raises(CliAgentError, match="'propose_fact' has no handler yet"):
        registry.handler("propose_fact")


def test_duplicate_specs_are_refused():
    with pytest.raises(SpecError, match="'x' is defined twice"):
        Registry([_spec("x"), _spec("x")], {})


def _offered(registry: Registry, *args, **kwargs) -> list[str]:
    return [s.name for s in registry.model_tools(*args, **kwargs)]


def test_optional_tool_only_when_hinted():
    registry = _registry()
    required = ["list_files", "read_file", "search", "create_file", "delete_file", "edit_file", "insert_text",
                "rename_file", "replace_definition", "replace_lines", "write_file", "run_command"]
    later = ["task", "update_plan"]  # the category after Project knowledge
    assert _offered(registry) == [*required, *later]
    assert _offered(registry, "fix the failing test in app.py") == [*required, *later]
    assert _offered(registry, "refactor the factory class") == [*required, *later]  # whole words only
    assert _offered(registry, "Remember: we indent with tabs") == [*required, "propose_fact", *later]
    assert _offered(registry, "note this DECISION") == [*required, "propose_fact", *later]
    assert _offered(registry, "from now on use pytest") == [*required, "propose_fact", *later]
    assert _offered(registry, "", workflow="record_decision") == [*required, "propose_fact", *later]
    assert _offered(registry, "", workflow="record-conventions") == [*required, "propose_fact", *later]


def test_only_restricts_and_switches_on_named_optional_tools():
    registry = _registry()
    assert _offered(registry, "remember this", only=["read_file", "search"]) == ["read_file", "search"]
    assert _offered(registry, "", only=("propose_fact", "read_file")) == ["read_file", "propose_fact"]
    assert _offered(registry, "", only=()) == []
    with pytest.raises(UsageError, match="unknown tool 'grep'; available tools: list_files"):
        registry.model_tools(only=["grep"])


def test_hidden_and_handlerless_tools_are_never_offered():
    registry = _registry(_spec("secret", exposed_to_model=False), without=frozenset({"propose_fact"}))
    assert "secret" in registry
    assert "secret" not in _offered(registry, only=["secret", "read_file"])
    assert "propose_fact" not in _offered(registry, "remember this fact")


def test_fingerprint_follows_the_contents():
    specs = load_specs([builtin_spec_dir()], handlers())
    assert Registry(specs, handlers()).fingerprint == Registry(reversed(specs), dict(handlers())).fingerprint
    assert _registry().fingerprint != _registry(_spec("extra")).fingerprint
    assert _registry().fingerprint != _registry(without=frozenset({"propose_fact"})).fingerprint


def test_builtin_is_loaded_once():
    registry = Registry.builtin()
    assert registry is Registry.builtin()
    assert set(registry.names()) == ALL
    assert registry.handler("read_file").__name__ == "read_file"

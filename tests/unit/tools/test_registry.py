"""The registry: lookups, category order, which tools the model is offered. The packaged tools are taken from their
specs (a new tool needs nothing here); the tools a test names are there for what they do."""

from __future__ import annotations

import pytest

from cli_agent.contracts.errors import CliAgentError, SpecError, UsageError
from cli_agent.tools.handlers import handlers
from cli_agent.tools.registry import CATEGORY_ORDER, Registry
from cli_agent.tools.specs import ToolSpec, builtin_spec_dir, load_specs


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
    registry = Registry([_spec("b", category="Edit"), _spec("z", category="Zeta"), _spec("a", category="Edit"),
                         _spec("y", category="Explore"), _spec("q", category="Alpha"), _spec("r", category="Run")], {})
    assert registry.categories() == ["Explore", "Edit", "Run", "Alpha", "Zeta"]  # the known order, then by name
    assert registry.names() == ["y", "a", "b", "r", "q", "z"]  # by category, then by name
    assert [s.name for s in registry.by_category("Edit")] == ["a", "b"]
    assert len(registry) == 6 and "a" in registry and "grep" not in registry


def test_the_packaged_tools_fill_the_known_categories_in_order():
    registry = _registry()
    assert registry.categories()[:len(CATEGORY_ORDER)] == list(CATEGORY_ORDER)
    assert registry.names() == [s.name for c in registry.categories() for s in registry.by_category(c)]
    assert len(registry) == sum(f.name.endswith(".toml") for f in builtin_spec_dir().iterdir())
    assert _registry(_spec("zz", category="Alpha")).categories()[-1] == "Alpha"


def test_unknown_tool_lists_the_available_ones():
    registry = _registry()
    with pytest.raises(UsageError) as info:
        registry.get("grep")
    assert str(info.value) == f"unknown tool 'grep'; available tools: {', '.join(registry.names())}"
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
    required = [s.name for s in registry.specs() if not s.optional]
    with_fact = [s.name for s in registry.specs() if not s.optional or s.name == "propose_fact"]  # in its place
    assert registry.get("propose_fact").optional and with_fact != required
    assert _offered(registry) == required
    assert _offered(registry, "fix the failing test in app.py") == required
    assert _offered(registry, "refactor the factory class") == required  # whole words only
    assert _offered(registry, "Remember: we indent with tabs") == with_fact
    assert _offered(registry, "note this DECISION") == with_fact
    assert _offered(registry, "from now on use pytest") == with_fact
    assert _offered(registry, "", workflow="record_decision") == with_fact
    assert _offered(registry, "", workflow="record-conventions") == with_fact


def test_only_restricts_and_switches_on_named_optional_tools():
    registry = _registry()
    assert _offered(registry, "remember this", only=["read_file", "search"]) == ["read_file", "search"]
    assert _offered(registry, "", only=("propose_fact", "read_file")) == ["read_file", "propose_fact"]
    assert _offered(registry, "", only=()) == []
    with pytest.raises(UsageError, match=f"unknown tool 'grep'; available tools: {registry.names()[0]}, "):
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
    assert registry.specs() == Registry(load_specs([builtin_spec_dir()], handlers()), handlers()).specs()
    assert all(registry.handler(name) is handlers()[name] for name in registry.names())

"""The prompt builder: golden system prompts, cache, tiers, context sections, native and json-protocol schemas."""

from __future__ import annotations

import hashlib
import json
import os
import re

import pytest
from jsonschema import Draft202012Validator
from places import GOLDEN

from cli_agent.prompt.builder import (
    MAX_AGENTS_MD_CHARS,
    PromptBuilder,
    PromptContext,
    json_protocol_schema,
    plan_fingerprint,
)
from cli_agent.tools.handlers import handlers
from cli_agent.tools.registry import Registry
from cli_agent.tools.specs import builtin_spec_dir, load_specs

# The task hints every optional tool (a fact, a URL), so the golden prompts show every tool there is.
GOLDEN_CTX = PromptContext(task="Remember: we indent with tabs, as https://example.com/style says.",
                           files=("README.md", "src/app.py", "tests/test_app.py"), files_truncated=3,
                           agents_md="Indent with tabs.\nRun `make test` before finishing.",
                           facts=("Tests use pytest.",), workspace_name="demo")


def _noop(ctx, **arguments): ...


def _registry(without: frozenset[str] = frozenset()) -> Registry:
    specs = load_specs([builtin_spec_dir()], handlers())
    return Registry(specs, {s.name: _noop for s in specs if s.name not in without})


def _build(**fields):
    return PromptBuilder(_registry()).build(PromptContext(**{"workspace_name": "demo", **fields}))


def _golden_tools(golden: str) -> set[str]:
    """The tools a golden prompt shows, by their `### NAME (required)` headings."""
    return set(re.findall(r"^### (\S+) \((?:required|optional)\)$", golden, re.MULTILINE))


@pytest.mark.parametrize("protocol", ["json", "native"])
def test_golden_system_prompt(protocol):
    """The whole prompt, word for word, with the tools the golden file was written with: a tool added since is left
    out of the comparison (its section is checked by the tests below, as every tool's is), so a new tool fails
    nothing here; a changed or removed one does. `UPDATE_GOLDEN=1 pytest tests/unit/prompt/test_builder.py` writes
    the files again with every tool, after a review of the difference."""
    ctx = PromptContext(**{**GOLDEN_CTX.__dict__, "protocol": protocol})
    path = GOLDEN / f"system_prompt_{protocol}.txt"
    registry = _registry()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        path.parent.mkdir(exist_ok=True)
        path.write_text(PromptBuilder(registry).build(ctx).system, encoding="utf-8")
    assert path.is_file(), f"{path} is missing: run UPDATE_GOLDEN=1 pytest {__file__}"
    golden = path.read_text(encoding="utf-8")
    system = PromptBuilder(registry.without(set(registry.names()) - _golden_tools(golden))).build(ctx).system
    assert system == golden, f"prompt changed: review, then UPDATE_GOLDEN=1 ({path})"


def test_builtin_registry_renders_like_the_tested_one():
    ctx = PromptContext(**{**GOLDEN_CTX.__dict__, "task": "fix the bug", "protocol": "json"})
    assert PromptBuilder(Registry.builtin()).build(ctx).system == PromptBuilder(_registry()).build(ctx).system


def test_second_build_with_the_same_inputs_does_not_render():
    builder = PromptBuilder(_registry())
    first = builder.build(PromptContext(task="fix the bug"))
    again = builder.build(PromptContext(task="fix the bug"))
    assert builder.renders == 1 and again.key == first.key and again.system == first.system
    builder.build(PromptContext(task="rename a variable"))  # same tools selected: same prompt
    assert builder.renders == 1
    hinted = builder.build(PromptContext(task="remember: tabs"))
    assert builder.renders == 2 and hinted.key != first.key
    builder.build(PromptContext(task="fix the bug", protocol="json"))
    builder.build(PromptContext(task="fix the bug", facts=("x",)))
    assert builder.renders == 4
    assert PromptBuilder(_registry(without=frozenset({"search"}))).build(PromptContext()).key != first.key


def test_returned_schemas_are_copies():
    builder = PromptBuilder(_registry())
    builder.build(PromptContext()).schemas[0]["function"]["parameters"]["type"] = "broken"
    assert builder.build(PromptContext()).schemas[0]["function"]["parameters"]["type"] == "object"
    assert builder.registry.get("list_files").parameters["type"] == "object"


def test_native_schemas_equal_the_spec_parameters():
    built = _build(task="remember this convention")
    assert [s["function"]["name"] for s in built.schemas] == [t.name for t in built.tools]
    for schema, spec in zip(built.schemas, built.tools, strict=True):
        assert schema == {"type": "function", "function": {
            "name": spec.name, "description": spec.description, "parameters": spec.parameters}}


def test_optional_tools_appear_only_when_hinted():
    plain = _build(task="fix the failing test")
    assert "propose_fact" not in [t.name for t in plain.tools]
    assert "# Optional tools" not in plain.system and "### propose_fact" not in plain.system
    hinted = _build(task="Remember that we use tabs")
    assert "# Optional tools" in hinted.system and "### propose_fact (optional)" in hinted.system
    assert "## Project knowledge tools" in hinted.system
    assert "propose_fact" in [t.name for t in _build(workflow="record_decision").tools]


def test_only_tools_restricts_the_prompt():
    built = _build(only_tools=("read_file", "search"))
    assert [t.name for t in built.tools] == ["read_file", "search"]
    assert "### edit_file" not in built.system and "## Edit tools" not in built.system


def test_every_parameter_is_documented():
    built = _build(task="remember", protocol="json")
    for spec in built.tools:
        required = set(spec.required_params())
        for name, prop in spec.parameters["properties"].items():
            need = "required" if name in required else "optional"
            kind = f"array of {prop['items']['type']}" if prop["type"] == "array" else prop["type"]
            assert f"- `{name}` ({kind}, {need}): {prop['description']}" in built.system
    assert '- `path` (string, optional): Folder to list, relative to the workspace root. Default: ".".' in built.system


def test_the_compact_prompt_of_a_small_model_leaves_out_the_sub_agent_and_the_checklist():
    """A 1.5B model offered `task` and `update_plan` answered "Created hello.py" without calling create_file: the
    compact prompt keeps the tools that act on files and commands, and leaves out the ones whose spec runs a
    sub-agent or keeps the plan."""
    full, compact = _build(protocol="json"), _build(detail="compact", protocol="json")
    left_out = {t.name for t in full.tools if t.runs_agent or t.updates_plan}
    assert {"task", "update_plan"} <= left_out
    assert left_out <= {t.name for t in full.tools}
    assert not left_out & {t.name for t in compact.tools}
    assert "create_file" in {t.name for t in compact.tools}


def test_compact_is_one_line_a_tool_and_at_most_half_the_full_prompt():
    full, compact = _build(protocol="json"), _build(detail="compact", protocol="json")
    assert "**When to use:**" in full.system and "**Example" in full.system
    assert "**When to use:**" not in compact.system and "**Example" not in compact.system
    assert len(compact.system) < len(full.system) * 0.5
    assert "- read_file(path, start_line?, end_line?): Read a text file of the workspace, whole or a range of its " \
           "lines.\n" in compact.system
    assert "- edit_file*(path, old, new, replace_all?): " in compact.system
    assert "A long file comes back in parts" not in compact.system and '"terminate": false}' in compact.system
    native = _build(detail="compact")
    assert "read_file" not in native.system  # the attached schemas carry the tools
    read = next(s for s in native.schemas if s["function"]["name"] == "read_file")
    assert read["function"]["description"] == "Read a text file of the workspace, whole or a range of its lines."


def test_native_prompt_does_not_repeat_what_the_schemas_carry():
    built = _build()
    for spec in built.tools:
        assert spec.description not in built.system
        assert f"### {spec.name} (" in built.system
    assert "- `path` (string, optional)" not in built.system and "**When to use:**" in built.system


def test_the_listing_skips_junk_ranks_and_keeps_to_its_budget():
    files = ("src/app.py", "src/__pycache__/app.cpython-311.pyc", "build/lib/app.py", "node_modules/x/index.js",
             "pkg.egg-info/PKG-INFO", "README.md", "docs/", "docs/guide.md", "app.log",
             *(f"data/f{i:04d}.csv" for i in range(400)))
    system = _build(files=files).system
    listing = system.split("# Workspace: demo")[1]
    assert "- README.md\n" in listing and "- src/app.py" in listing and "- docs/guide.md" in listing
    for junk in ("__pycache__", "build/lib", "node_modules", "egg-info", "app.log", "- docs/\n"):
        assert junk not in listing
    shown = listing.count("\n- ")
    assert shown < 400 and f"... and {403 - shown} more" in listing
    compact = _build(files=files, detail="compact").system
    assert "Files: README.md, " in compact and len(compact.split("Files: ")[1]) < 1400


def test_json_protocol_teaches_the_exact_format():
    system = _build(protocol="json", task="remember").system
    assert "output ONLY one JSON object" in system
    assert '{"tool": "<tool name>", "parameters": {<the tool\'s parameters>}, "terminate": false}' in system
    assert '"terminate": false = continue' in system and '"terminate": true = the tool runs and the run ends' in system
    assert "reply in plain text with no\nJSON at all" in system
    examples = [json.loads(line) for line in system.splitlines() if line.startswith('{"tool": "') and "<" not in line]
    assert len(examples) == sum(len(t.examples) for t in _build(task="remember").tools)
    validator = Draft202012Validator(json_protocol_schema(_build(task="remember").tools))
    for example in examples:
        assert list(example) == ["tool", "parameters", "terminate"] and example["terminate"] is False
        validator.validate(example)


def test_native_protocol_shows_function_calls():
    system = _build(protocol="native").system
    assert "native function call" in system and '"terminate"' not in system
    assert 'read_file(path="src/app.py", start_line=40, end_line=80)' in system


def test_context_sections():
    system = _build(files=("a.py", "b.py"), files_truncated=7, agents_md="Use tabs.", facts=("F1", "F2")).system
    assert "# Workspace: demo\nFiles (paths relative to the workspace root):\n- a.py\n- b.py\n... and 7 more" in system
    assert "# Project instructions (AGENTS.md)\nUse tabs." in system
    assert "# Project facts (authoritative)\n" in system and "- F1\n- F2" in system
    assert "Do not assume any other fact" in system and "propose_fact" not in system.split("# Project facts")[1]
    hinted = _build(task="a fact", facts=("F1",)).system.split("# Project facts (authoritative)")[1]
    assert "propose a new fact or a change with propose_fact, but do not assume" in hinted
    bare = _build().system
    assert "(no files)" in bare and "AGENTS.md" not in bare and "Project facts" not in bare


def test_agents_md_is_bounded():
    system = _build(agents_md="x" * (MAX_AGENTS_MD_CHARS + 500)).system
    assert "x" * MAX_AGENTS_MD_CHARS in system and "x" * (MAX_AGENTS_MD_CHARS + 1) not in system
    assert "[... AGENTS.md cut here: 500 more characters]" in system


def test_preamble_rules():
    system = _build().system
    for phrase in ("Work only inside the workspace", "Read a file before you edit it", "Prefer edit_file",
                   "one logical change at a time", "say in a few lines what you did", '"demo"'):
        assert phrase in system


def test_context_is_validated():
    with pytest.raises(ValueError, match="protocol"):
        PromptContext(protocol="xml")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="detail"):
        PromptContext(detail="tiny")  # type: ignore[arg-type]


def test_json_protocol_schema():
    tools = _build(task="remember").tools
    schema = json_protocol_schema(tools)
    Draft202012Validator.check_schema(schema)
    validator = Draft202012Validator(schema)
    good = [
        {"tool": "read_file", "parameters": {"path": "a.py"}, "terminate": False},
        {"tool": "list_files", "parameters": {}, "terminate": True},
        {"tool": "answer", "parameters": {"text": "done"}, "terminate": True},
    ]
    bad = [
        {"tool": "grep", "parameters": {}, "terminate": False},
        {"tool": "read_file", "parameters": {}, "terminate": False},
        {"tool": "read_file", "parameters": {"path": "a", "x": 1}, "terminate": False},
        {"tool": "read_file", "parameters": {"path": "a"}},
        {"tool": "read_file", "parameters": {"path": "a"}, "terminate": "no"},
        {"tool": "read_file", "parameters": {"path": "a"}, "terminate": False, "extra": 1},
        {"tool": "answer", "parameters": {"text": "done"}, "terminate": False},
    ]
    assert all(validator.is_valid(doc) for doc in good)
    assert not any(validator.is_valid(doc) for doc in bad)
    assert len(schema["anyOf"]) == len(tools) + 1


def test_plan_fingerprint_is_canonical():
    schemas = [{"type": "function", "function": {"name": "f", "parameters": {"b": 1, "a": 2}}}]
    first = plan_fingerprint("sys é", schemas, {"temperature": 0, "model": "m"})
    assert first == plan_fingerprint("sys é", json.loads(json.dumps(schemas)), {"model": "m", "temperature": 0})
    canonical = json.dumps({"options": {"model": "m", "temperature": 0}, "system": "sys é", "tools": schemas},
                           sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert first == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert first != plan_fingerprint("sys é", None, {"temperature": 0, "model": "m"})
    assert first != plan_fingerprint("sys é", schemas, {"temperature": 1, "model": "m"})


def test_a_known_test_command_is_asked_for_only_when_run_command_is_offered():
    registry = _registry()
    for detail in ("full", "compact"):
        system = PromptBuilder(registry).build(PromptContext(test_command="pytest -q", detail=detail,
                                                             protocol="json")).system
        assert "run the tests with run_command: `pytest -q`" in system
    without = PromptBuilder(_registry(without=frozenset({"run_command"})))
    assert "run the tests with run_command:" not in without.build(PromptContext(test_command="pytest -q")).system
    assert "run the tests with run_command:" not in PromptBuilder(registry).build(PromptContext()).system

"""Tool specs: the packaged files, their validation (one-line SpecError naming file and field), BFCL definitions."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import zipfile
from dataclasses import FrozenInstanceError
from pathlib import Path

import pytest
from places import REPO

from cli_agent.contracts.errors import SpecError
from cli_agent.tools.handlers import handlers
from cli_agent.tools.specs import (
    ToolSpec,
    builtin_spec_dir,
    load_spec_file,
    load_specs,
)

# The public contract of the tools that exist: their names and parameters (required ones first, then the optional
# ones), which models, workflows and users' scripts call. A spec may not drop or rename one of these; a new tool is
# not held to this table (its spec is its contract), and the tests below check every packaged spec, whatever its name.
CONTRACT = {
    "list_files": ([], ["path", "pattern", "depth"]),
    "read_file": (["path"], ["start_line", "end_line"]),
    "search": (["pattern"], ["path", "glob", "literal", "ignore_case", "output_mode", "context", "offset"]),
    "create_file": (["path", "content"], []),
    "edit_file": (["path", "old", "new"], ["replace_all"]),
    "write_file": (["path", "content"], []),
    "delete_file": (["path"], []),
    "propose_fact": (["text", "reason"], []),
    "insert_text": (["path", "text"], ["after_line"]),
    "replace_lines": (["path", "start_line", "end_line", "new"], []),
    "replace_definition": (["path", "name", "new"], []),
    "rename_file": (["path", "new_path"], []),
    "run_command": (["command"], ["timeout_s", "background"]),
    "process_output": (["process"], []),
    "stop_process": (["process"], []),
    "web_fetch": (["url"], ["offset"]),
    "update_plan": (["steps"], ["explanation"]),
    "task": (["description", "prompt"], ["agent"]),
}


def _builtin() -> dict[str, ToolSpec]:
    """The packaged specs, checked against the real handlers (their signatures must match the schemas)."""
    return {s.name: s for s in load_specs([builtin_spec_dir()], handlers())}


def test_builtin_specs_keep_the_public_contract():
    specs = _builtin()
    assert set(specs) >= set(CONTRACT)
    for name, (required, optional) in CONTRACT.items():
        assert list(specs[name].required_params()) == required, name
        assert set(specs[name].parameters["properties"]) == {*required, *optional}, name
    assert specs["list_files"].parameters["properties"]["path"]["default"] == "."
    fact = specs["propose_fact"]
    assert fact.optional and not fact.requires_approval and fact.category == "Project knowledge"
    assert {"facts?", "conventions?", "remember", "decisions?"} <= set(fact.hints)
    fetch = specs["web_fetch"]
    assert fetch.optional and fetch.requires_approval and not fetch.mutates  # changes no file, but reaches the web


@pytest.mark.parametrize("spec", list(_builtin().values()), ids=lambda s: s.name)
def test_every_builtin_spec_is_complete(spec):
    """What the model is told of a tool it is offered: when to use it, an example, a description of each
    parameter."""
    assert not spec.exposed_to_model or (spec.examples and spec.when_to_use)
    assert all(p.get("description") for p in spec.parameters["properties"].values())


def test_every_builtin_spec_has_its_handler():
    """A handler is the public function of a handler module named as its tool (the modules' other public functions
    are there too, and are no tool's until a spec names them)."""
    assert set(_builtin()) <= set(handlers())


GOOD = """\
name = "greet"
category = "Edit"
description = "Say hello."
when_to_use = "When greeting."
requires_approval = true
mutates = true
hints = ["hello"]
kind = "edit"
verb = "Greet"

[parameters]
type = "object"
required = ["path"]
additionalProperties = false

[parameters.properties.path]
type = "string"
description = "Where."

[parameters.properties.loud]
type = "boolean"
description = "Shout."
default = false

[[examples]]
description = "Greet"
input = { path = "a.txt" }
"""


def greet(ctx, path, loud=False): ...


def _write(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text, encoding="utf-8")
    return folder


def _error(folder: Path, handlers=None) -> str:
    with pytest.raises(SpecError) as info:
        load_specs([folder], {"greet": greet} if handlers is None else handlers)
    message = str(info.value)
    assert "\n" not in message
    assert info.value.exit_code == 2
    return message


def test_a_good_spec_loads(tmp_path):
    (spec,) = load_specs([_write(tmp_path, "greet.toml", GOOD)], {"greet": greet})
    assert isinstance(spec, ToolSpec)
    assert spec.name == "greet" and spec.hints == ("hello",) and spec.examples[0].input == {"path": "a.txt"}
    with pytest.raises(FrozenInstanceError):
        spec.name = "other"


BROKEN = [  # `file:LINE: key: problem` (cli_agent.validated.reader), the line of the key at fault
    ("toml syntax", GOOD.replace('name = "greet"', 'name = "greet'),
     r"^greet\.toml:1: invalid TOML: .+ \(column \d+\)$"),
    ("unknown key", GOOD.replace("mutates = true", "mutates = true\noptinal = true"),
     r"^greet\.toml:7: optinal: unknown key \(did you mean 'optional'\?\)$"),
    ("wrong type", GOOD.replace("requires_approval = true", 'requires_approval = "yes"'),
     r"^greet\.toml:5: requires_approval: expected true or false, found string 'yes'$"),
    ("wrong type in list", GOOD.replace('hints = ["hello"]', "hints = [1]"),
     r"^greet\.toml:7: hints\[0\]: expected a string, found integer 1$"),
    ("missing key", GOOD.replace('description = "Say hello."', ""),
     r"^greet\.toml: description: missing required key$"),
    ("invalid schema", GOOD.replace('type = "string"', 'type = "strin"'),
     r"^greet\.toml:17: parameters\.properties\.path\.type: 'strin' is not valid under any of the given schemas$"),
    ("top not object", GOOD.replace('type = "object"', 'type = "array"'),
     r"^greet\.toml:12: parameters\.type: expected 'object' at the top, got 'array'$"),
    ("required not a property", GOOD.replace('required = ["path"]', 'required = ["path", "where"]'),
     r"^greet\.toml:13: parameters\.required: 'where' is not one of the properties"),
    ("bad example", GOOD.replace('input = { path = "a.txt" }', 'input = { path = "a.txt", colour = "red" }'),
     r"^greet\.toml:27: examples\[0\]\.input: Additional properties are not allowed \('colour' was unexpected\)$"),
    ("bad example value", GOOD.replace('input = { path = "a.txt" }', "input = { path = 3 }"),
     r"^greet\.toml:27: examples\[0\]\.input\.path: 3 is not of type 'string'$"),
    ("bad hint", GOOD.replace('hints = ["hello"]', 'hints = ["hel(lo"]'),
     r"^greet\.toml:7: hints\[0\]: 'hel\(lo' is not a valid regular expression"),
    ("unknown example key", GOOD.replace('input = { path = "a.txt" }', 'input = { path = "a.txt" }\nwhen = 1'),
     r"^greet\.toml:28: examples\[0\]\.when: unknown key \(expected one of: input, description\)$"),
    ("mutates without approval", GOOD.replace("requires_approval = true", "requires_approval = false"),
     r"^greet\.toml:5: requires_approval: must be true for a tool that mutates files$"),
    ("wrong type of a text", GOOD.replace('when_to_use = "When greeting."', "when_to_use = 1"),
     r"^greet\.toml:4: when_to_use: expected a string, found integer 1$"),
    ("long wrong string", GOOD.replace('name = "greet"', f'name = "{"x" * 100}"'),
     r"^greet\.toml:1: name: string should match pattern .+, found string 'x{30,}\.\.\.$"),
    ("bad name", GOOD.replace('name = "greet"', 'name = "greet me"'),
     r"^greet\.toml:1: name: string should match pattern"),
    # a tool's facts, which the front ends read from its spec: each one must be there and known
    ("missing kind", GOOD.replace('kind = "edit"', ""), r"^greet\.toml: kind: missing required key$"),
    ("unknown kind", GOOD.replace('kind = "edit"', 'kind = "write"'),
     r"^greet\.toml:8: kind: string should match pattern '\^\(read\|edit\|.+, found string 'write'$"),
    ("missing verb", GOOD.replace('verb = "Greet"', ""), r"^greet\.toml: verb: missing required key$"),
    ("empty verb", GOOD.replace('verb = "Greet"', 'verb = ""'), r"^greet\.toml:9: verb: "),
    ("missing mutates", GOOD.replace("mutates = true", ""), r"^greet\.toml: mutates: missing required key$"),
    ("destructive not a bool", GOOD.replace('verb = "Greet"', 'verb = "Greet"\ndestructive = "yes"'),
     r"^greet\.toml:10: destructive: expected true or false, found string 'yes'$"),
]


@pytest.mark.parametrize(("text", "expected"), [(t, e) for _, t, e in BROKEN], ids=[i for i, _, _ in BROKEN])
def test_a_broken_spec_names_file_and_field(tmp_path, monkeypatch, text, expected):
    monkeypatch.chdir(tmp_path)
    message = _error(_write(tmp_path, "greet.toml", text))
    assert re.search(expected, message), message


STRING_TYPE = 'type = "string"'


def _line_of(text: str, fragment: str) -> int:
    return text[: text.index(fragment)].count("\n") + 1


def test_packaged_spec_errors_say_tool_specs(tmp_path):
    folder = tmp_path / "cli_agent" / "tool_specs"
    text = (REPO / "cli_agent" / "tool_specs" / "read_file.toml").read_text(encoding="utf-8")
    _write(folder, "read_file.toml", text.replace(STRING_TYPE, 'type = "strin"', 1))
    assert _error(folder, {"read_file": handlers()["read_file"]}) == (
        f"tool_specs/read_file.toml:{_line_of(text, STRING_TYPE)}: parameters.properties.path.type: 'strin' "
        "is not valid under any of the given schemas")


def test_missing_handler(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    message = _error(_write(tmp_path, "greet.toml", GOOD), {"other": greet})
    assert message == "greet.toml: name: no handler for tool 'greet' (handlers: other)"


def _no_loud(ctx, path): ...
def _loud_required(ctx, path, loud): ...
def _path_optional(ctx, path="x", loud=False): ...
def _extra(ctx, path, loud=False, colour="red"): ...
def _kwargs(ctx, path, loud=False, **more): ...
def _no_ctx(*, path, loud=False): ...


@pytest.mark.parametrize(("handler", "expected"), [
    (_no_loud, r"^greet\.toml: parameters\.properties\.loud: handler .*_no_loud\(ctx, path\) has no parameter 'loud'$"),
    (_loud_required, r"^greet\.toml: parameters\.required: 'loud' should be required \(no default\) to match"),
    (_path_optional, r"^greet\.toml: parameters\.required: 'path' should be optional \(has a default\) to match"),
    (_extra, r"^greet\.toml: parameters\.properties: missing 'colour', a parameter of handler .*_extra"),
    (_kwargs, r"^greet\.toml: parameters: handler .* must take named parameters only, not \*\*more$"),
    (_no_ctx, r"^greet\.toml: name: handler .* must take the tool context as its first positional parameter$"),
])
def test_handler_mismatch(tmp_path, monkeypatch, handler, expected):
    monkeypatch.chdir(tmp_path)
    message = _error(_write(tmp_path, "greet.toml", GOOD), {"greet": handler})
    assert re.search(expected, message), message


def test_duplicate_names_across_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    first, second = _write(tmp_path / "a", "greet.toml", GOOD), _write(tmp_path / "b", "hello.toml", GOOD)
    with pytest.raises(SpecError) as info:
        load_specs([first, second], {"greet": greet})
    assert str(info.value) == "b/hello.toml: name: duplicate tool 'greet', already defined in a/greet.toml"


def test_load_spec_file_and_missing_folder(tmp_path):
    assert load_spec_file(_write(tmp_path, "greet.toml", GOOD) / "greet.toml").name == "greet"
    with pytest.raises(SpecError, match="not a folder of tool specs"):
        load_specs([tmp_path / "nope"], {})


@pytest.mark.slow
def test_wheel_contains_every_spec(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".venv", ".git", "build", "dist", "*.egg-info", "__pycache__", ".*_cache", "tool_specs"))
    shutil.copytree(REPO / "cli_agent" / "tool_specs", source / "cli_agent" / "tool_specs")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    result = subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path / "dist"),
                             str(source)], capture_output=True, text=True, env=env, timeout=300)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
    specs = sorted(p.name for p in (REPO / "cli_agent" / "tool_specs").glob("*.toml"))
    assert len(specs) >= len(CONTRACT)
    assert {f"cli_agent/tool_specs/{name}" for name in specs} <= names

"""Tool specs: one TOML file per tool in `tool_specs/`, the single source of truth for what the model is told.

`load_specs(dirs, handlers)` reads every `*.toml` in the given folders and checks, before anything runs:
TOML syntax, unknown keys and wrong types (`ToolSpec`, checked by pydantic through `checked`), that `parameters`
is a valid JSON Schema (Draft 2020-12) with `type: object` at the top, that every example validates against it,
that every hint is a valid regex, that a handler exists for the tool and its keyword parameters are exactly the
schema's properties (required ones without a default, the first positional parameter being the ToolContext), and
that no name is defined twice. Every spec states a tool's facts, which every front end reads from it rather than
from a table of names: `kind` (ACP's tool kind: read, edit, delete, move, search, execute, think, fetch,
switch_mode, other), `mutates`, `verb` (the word a transcript shows for a call, `Read(app.py)`) and `destructive`
(a call can lose what was there: the MCP server's hint). A broken spec raises `SpecError` with one line: the file,
the line, the field and what was expected (`cli_agent.validated.reader`).
"""

from __future__ import annotations

import hashlib
import importlib.resources
import inspect
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from cli_agent.contracts import SpecError, dataclass
from cli_agent.fs import RegularFile
from cli_agent.validated import Problem, checked, load_checked, read_toml, rule

__all__ = ["ToolSpec", "validate_parameters"]

_NAME = r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$"  # what OpenAI-style function names allow
# The tool kinds of the Agent Client Protocol (its schema's `ToolKind`), which an editor shows as icons
KINDS = ("read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other")


@dataclass(frozen=True, kw_only=True)
class Example:
    input: dict[str, Any]
    description: str = rule(strict=True)


@dataclass(frozen=True, kw_only=True)
class ToolSpec:
    """One tool as its TOML file describes it. `parameters` is a JSON Schema object; treat it as read-only."""

    name: str = rule(pattern=_NAME, strict=True)
    category: str = rule(min_length=1, strict=True)
    description: str = rule(min_length=1, strict=True)
    when_to_use: str = rule("", strict=True)
    optional: bool = rule(False, strict=True)
    requires_approval: bool = rule(False, strict=True)
    exposed_to_model: bool = rule(True, strict=True)
    mutates: bool = rule(strict=True)
    kind: str = rule(pattern=f"^({'|'.join(KINDS)})$", strict=True)  # one of KINDS
    verb: str = rule(min_length=1, max_length=40, strict=True)  # how a call is shown: `Read(app.py)`
    destructive: bool = rule(False, strict=True)  # a call may lose what was there (delete, overwrite)
    approval_note: str = rule("", strict=True)  # shown with the approval question (an MCP tool: its server's hints)
    runs_command: bool = rule(False, strict=True)  # the handler runs a command in the sandbox; its changes are approved
    approval_scope: str = rule("", pattern=r"^(|host)$", strict=True)  # "host": `a` grants the url's host, not all
    updates_plan: bool = rule(False, strict=True)  # its result is the run's plan (`steps`), shown as it changes
    runs_agent: bool = rule(False, strict=True)  # a sub-task in a conversation of its own (the loop runs it)
    hints: tuple[str, ...] = ()
    parameters: dict[str, Any]
    examples: tuple[Example, ...] = ()

    def required_params(self) -> tuple[str, ...]:
        return tuple(self.parameters.get("required", ()))


def builtin_spec_dir() -> Any:
    """The packaged `cli_agent/tool_specs` folder (a Traversable: works from a checkout and from a wheel)."""
    return importlib.resources.files("cli_agent") / "tool_specs"


def display_path(path: Any) -> str:
    """`tool_specs/read_file.toml` for packaged specs; the path relative to the working dir (or whole) otherwise."""
    path = Path(str(path))
    if path.parent.name == "tool_specs" and path.parent.parent.name == "cli_agent":
        return f"tool_specs/{path.name}"
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def validate_parameters(schema: Any) -> str | None:
    """The problem with a tool's parameter schema as `field: message`, or None if it is fine."""
    problem = _parameters_problem(schema)
    return str(problem) if problem else None


def _parameters_problem(schema: Any) -> Problem | None:
    # deferred: jsonschema (40 ms), only for what the fast checks leave
    from jsonschema import Draft202012Validator, SchemaError

    if not isinstance(schema, dict):
        return Problem(("parameters",), f"expected a table (a JSON Schema object), got {type(schema).__name__}")
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        return Problem(("parameters", *exc.path), exc.message)
    if schema.get("type") != "object":
        return Problem(("parameters", "type"), f"expected 'object' at the top, got {schema.get('type')!r}")
    properties = schema.get("properties", {})
    for name in schema.get("required", []):
        if name not in properties:
            return Problem(("parameters", "required"), f"{name!r} is not one of the properties {sorted(properties)}")
    return None


def _check_content(spec: ToolSpec) -> Problem | None:
    from jsonschema import Draft202012Validator  # deferred: jsonschema (40 ms), only for what the fast checks leave

    problem = _parameters_problem(spec.parameters)
    if problem:
        return problem
    if spec.mutates and not spec.requires_approval:
        return Problem(("requires_approval",), "must be true for a tool that mutates files")
    for i, hint in enumerate(spec.hints):
        try:
            re.compile(hint)
        except re.error as exc:
            return Problem(("hints", i), f"{hint!r} is not a valid regular expression ({exc})")
    validator = Draft202012Validator(spec.parameters)
    for i, example in enumerate(spec.examples):
        error = next(iter(validator.iter_errors(example.input)), None)
        if error is not None:
            return Problem(("examples", i, "input", *error.path), error.message)
    return None


def load_spec_file(path: Any, *, content_checked: bool = False) -> ToolSpec:
    """Parse and validate one spec file on its own (no handler check); raise SpecError naming file and field.
    `content_checked`: these exact bytes passed every check before (see `content_key`): build the spec unchecked."""
    path = Path(path) if isinstance(path, str) else path
    toml = read_toml(RegularFile(path) if isinstance(path, Path) else path, display_path(path), SpecError)
    if content_checked:  # these bytes passed every check before: built as they are, pydantic not even imported
        return _trusted(toml.data)
    spec = load_checked(ToolSpec, toml, SpecError)
    problem = _check_content(spec)
    if problem:
        raise SpecError(toml.at(problem.loc, problem.message))
    return spec


def _trusted(data: dict[str, Any]) -> ToolSpec:
    examples = tuple(Example(**example) for example in data.pop("examples", ()))
    hints = tuple(data.pop("hints", ()))
    return ToolSpec(**data, hints=hints, examples=examples)


def check_handler(spec: ToolSpec, handler: Callable[..., Any]) -> str | None:
    """The mismatch between a handler's signature and the spec's parameters as `field: message`, or None."""
    signature = inspect.signature(handler)
    label = f"{getattr(handler, '__module__', '?')}.{getattr(handler, '__qualname__', handler)}{signature}"
    params = list(signature.parameters.values())
    if not params or params[0].kind not in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        return f"name: handler {label} must take the tool context as its first positional parameter"
    keyword = {}
    for p in params[1:]:
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            return f"parameters: handler {label} must take named parameters only, not {p}"
        keyword[p.name] = p.default is p.empty
    properties, required = spec.parameters.get("properties", {}), set(spec.required_params())
    for name in properties:
        if name not in keyword:
            return f"parameters.properties.{name}: handler {label} has no parameter {name!r}"
        if keyword[name] != (name in required):
            expected = "required (no default)" if keyword[name] else "optional (has a default)"
            return f"parameters.required: {name!r} should be {expected} to match handler {label}"
    for name in keyword:
        if name not in properties:
            return f"parameters.properties: missing {name!r}, a parameter of handler {label}"
    return None


def content_key(directory: Any) -> str:
    """sha256 of what the checks of a folder depend on: this module, `checked`, and every spec file in it."""
    digest = hashlib.sha256(Path(__file__).read_bytes() + Path(checked.__file__).read_bytes())
    for file in _spec_files(directory):
        digest.update(b"\0" + file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def _spec_files(directory: Any) -> list[Any]:
    if not directory.is_dir():
        raise SpecError(f"{display_path(directory)}: not a folder of tool specs")
    return sorted((f for f in directory.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name)


def load_specs(
    dirs: Iterable[Any],
    handlers: Mapping[str, Callable[..., Any]],
    *,
    content_checked: bool = False,
) -> list[ToolSpec]:
    """Every spec in `dirs` (folders, as Paths or importlib Traversables), validated, in folder then file order.

    A spec needs a handler in `handlers` whose signature matches.
    `content_checked`: the caller knows these exact files passed every check of this module before, so their
    fields and JSON Schemas are not checked again (pydantic and jsonschema: the slow part of loading); names and
    handlers are checked as always.
    """
    specs: list[ToolSpec] = []
    seen: dict[str, str] = {}
    for directory in dirs:
        directory = Path(directory) if isinstance(directory, str) else directory
        for file in _spec_files(directory):
            spec, where = load_spec_file(file, content_checked=content_checked), display_path(file)
            if spec.name in seen:
                raise SpecError(f"{where}: name: duplicate tool {spec.name!r}, already defined in {seen[spec.name]}")
            seen[spec.name] = where
            handler = handlers.get(spec.name)
            if handler is None:
                known = ", ".join(sorted(handlers)) or "none"
                raise SpecError(f"{where}: name: no handler for tool {spec.name!r} (handlers: {known})")
            problem = check_handler(spec, handler)
            if problem:
                raise SpecError(f"{where}: {problem}")
            specs.append(spec)
    return specs

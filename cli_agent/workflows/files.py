"""Workflows: tasks the user invokes by name (`/explain src/app.py`), defined in TOML files, never shown to the model.

A workflow file holds `name`, `title`, `description`, `category`, `[[params]]` (`name`, `type` =
string|int|bool|path|choice, `required`, `default`, `choices`, `help`, and `must_exist` for a path) and `[[steps]]`,
each either `prompt = "..."` (optional `tools = [...]` limits the loop to those tools) or `tool = "NAME"` with an
`[steps.arguments]` table. `{{param}}` placeholders are the only template syntax. Everything is checked at load
(`checked` dataclasses): a broken file is skipped and reported as one line, `path:LINE: field: reason`
(`cli_agent.validated.reader`).

Sources, nearest last (a nearer one shadows a farther one with the same name): the built-ins in
`cli_agent/builtin_workflows/`, the user's `<config dir>/workflows/`, the project's `.cli-agent/workflows/`.

The API the REPL and the CLI use (invoking them lives in `cli_agent.workflows.run`):

    catalog = load_workflows(workspace)        # Catalog: .get(name), .require(name), .by_category(), .errors
    workflow.usage, workflow.params            # "refactor PATH GOAL"; Param: .name .type .help .choices .describe()
    param.convert(text, workspace)             # the typed value, or WorkflowError saying what was expected
"""

from __future__ import annotations

import importlib.resources
import re
from collections.abc import Collection, Iterable, Sequence
from dataclasses import field, replace
from pathlib import Path
from typing import Any, Literal

from cli_agent.config import folder_trusted
from cli_agent.contracts import ToolError, WorkflowError, dataclass
from cli_agent.fs import RegularFile, paths
from cli_agent.tools import Registry
from cli_agent.validated import Loc, TomlFile, load_checked, read_toml, rule

__all__ = ["Catalog", "Param", "Workflow", "load_workflows"]

CATEGORY_ORDER: tuple[str, ...] = ("Understand", "Change", "Project")
Value = str | int | bool | None
_IDENT = r"^[A-Za-z_][A-Za-z0-9_]*$"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
PLACEHOLDER = re.compile(r"\{\{(.*?)\}\}", re.DOTALL)
_TRUE, _FALSE = ("yes", "true", "1"), ("no", "false", "0")


def _identifier(name: str) -> str:
    if not re.match(_IDENT, name):
        raise ValueError(f"expected letters, digits and _, not starting with a digit, got {name!r}")
    return name


def _filled(text: str | None) -> str | None:
    if text is not None and not text.strip():
        raise ValueError("expected a non-empty string")
    return None if text is None else text.strip()


@dataclass(frozen=True, kw_only=True)
class Param:
    name: str = rule(after=_identifier)
    type: Literal["string", "int", "bool", "path", "choice"] = "string"
    required: bool = False
    default: bool | int | str | None = None
    choices: tuple[str, ...] = ()
    help: str = ""
    must_exist: bool = False  # a path that must name an existing file or folder

    @property
    def usage(self) -> str:
        return self.name.upper() if self.required else f"[{self.name.upper()}]"

    def describe(self) -> str:
        """`path (path, required): the file to explain`."""
        kind = f"one of {'|'.join(self.choices)}" if self.type == "choice" else self.type
        extra = ", required" if self.required else (f", default {self.default!r}" if self.default is not None else "")
        return f"{self.name} ({kind}{extra})" + (f": {self.help}" if self.help else "")

    def convert(self, text: str, workspace: Any) -> Value:
        """The typed value of `text`, or WorkflowError saying what was expected."""
        if self.required and not text.strip():
            raise WorkflowError(f"{self.name}: must not be empty")
        if self.type == "int":
            try:
                return int(text.strip())
            except ValueError:
                raise WorkflowError(f"{self.name}: expected a whole number, got {text!r}") from None
        if self.type == "bool":
            word = text.strip().lower()
            if word in _TRUE or word in _FALSE:
                return word in _TRUE
            raise WorkflowError(f"{self.name}: expected yes/no (true/false, 1/0), got {text!r}")
        if self.type == "choice" and text not in self.choices:
            raise WorkflowError(f"{self.name}: expected one of {', '.join(self.choices)}, got {text!r}")
        if self.type == "path":
            return self._path(text, workspace)
        return text

    def _path(self, text: str, workspace: Any) -> str:
        try:
            rel = workspace.relative(text.strip())
        except ToolError as exc:
            raise WorkflowError(f"{self.name}: {exc.message}") from None
        if self.must_exist and not workspace.exists(rel):
            near = workspace.nearest(rel, 3)
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            raise WorkflowError(f"{self.name}: {rel} does not exist in the workspace{hint}")
        return rel


@dataclass(frozen=True, kw_only=True)
class PromptStep:
    prompt: str = rule(min_length=1)
    tools: tuple[str, ...] | None = None  # None: every tool the loop offers


@dataclass(frozen=True, kw_only=True)
class ToolStep:
    tool: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _File:
    """A workflow file's keys; its steps are checked one by one, as a PromptStep or a ToolStep."""

    name: str | None = rule(None, after=_filled)  # default: the file's name
    title: str | None = rule(None, after=_filled)  # default: the name
    description: str = rule(after=_filled)
    category: str = rule("General", after=_filled)
    params: tuple[Param, ...] = ()
    steps: tuple[dict[str, Any], ...] = ()


Step = PromptStep | ToolStep


@dataclass(frozen=True)
class Workflow:
    name: str
    title: str
    description: str
    category: str
    params: tuple[Param, ...]
    steps: tuple[Step, ...]
    source: str = "built-in"  # "built-in" | "user" | "project"
    path: str = ""  # the file it was loaded from
    shadows: tuple[str, ...] = ()  # files of farther sources with the same name, nearest first

    @property
    def usage(self) -> str:
        return " ".join([self.name, *(p.usage for p in self.params)])

    def param(self, name: str) -> Param | None:
        return next((p for p in self.params if p.name == name), None)


@dataclass(frozen=True)
class Catalog:
    workflows: dict[str, Workflow] = field(default_factory=dict)
    errors: tuple[str, ...] = ()  # one line per broken file: "path: reason"
    notes: tuple[str, ...] = ()  # one line per project workflow held back in an untrusted folder

    def get(self, name: str) -> Workflow | None:
        return self.workflows.get(name)

    def require(self, name: str) -> Workflow:
        found = self.get(name)
        if found is not None:
            return found
        broken = f"; {len(self.errors)} workflow file(s) are broken: {self.errors[0]}" if self.errors else ""
        raise WorkflowError(f"unknown workflow {name!r}; available: {', '.join(self.names()) or 'none'}{broken}")

    def names(self) -> list[str]:
        return sorted(self.workflows)

    def by_category(self) -> dict[str, list[Workflow]]:
        rank = {c: i for i, c in enumerate(CATEGORY_ORDER)}
        out: dict[str, list[Workflow]] = {}
        for wf in sorted(self.workflows.values(), key=lambda w: (rank.get(w.category, len(rank)), w.category,
                                                                w.name)):
            out.setdefault(wf.category, []).append(wf)
        return out


# -- loading ------------------------------------------------------------------------------------------------------

def workflow_dirs(root: Path) -> list[tuple[str, Any]]:
    """(source, folder) from farthest to nearest; the built-in folder is a Traversable."""
    return [("built-in", importlib.resources.files("cli_agent") / "builtin_workflows"),
            ("user", paths.user_config_dir() / "workflows"),
            ("project", Path(root) / paths.PROJECT_DIR / "workflows")]


def load_workflows(workspace: Any, *, tools: Collection[str] | None = None,
                   dirs: Sequence[tuple[str, Any]] | None = None, trusted: bool | None = None) -> Catalog:
    """Every workflow of every source; `workspace` is a Workspace or a folder; `tools` the known tool names
    (default: the built-in registry's). In a folder that is not `trusted` (default: as `CLI_AGENT_TRUST` and the
    trust store say) a project workflow does not shadow a built-in or user one of the same name."""
    if tools is None:
        tools = Registry.builtin().names()
    root = workspace if isinstance(workspace, str | Path) else workspace.root
    found: dict[str, Workflow] = {}
    problems: list[str] = []
    notes: list[str] = []
    for source, folder in dirs if dirs is not None else workflow_dirs(Path(root)):
        if not folder.is_dir():
            continue
        here: dict[str, str] = {}
        for file in sorted((f for f in folder.iterdir() if f.name.endswith(".toml")), key=lambda f: f.name):
            try:
                wf = load_workflow_file(file, tools, source=source)
                if wf.name in here:
                    raise WorkflowError(f"{wf.path}: name: {wf.name!r} is already defined in {here[wf.name]}")
            except WorkflowError as exc:
                problems.append(str(exc))
                continue
            here[wf.name] = wf.path
            older = found.get(wf.name)
            if older is not None and source == "project" and not _trusted(Path(root), trusted):
                notes.append(f"the project workflow {wf.name} ({wf.path}) does not replace the {older.source} one: "
                             f"this folder is not trusted (cli-agent trust)")
                continue
            if older is not None:
                wf = replace(wf, shadows=(older.path, *older.shadows))
            found[wf.name] = wf
    return Catalog(dict(sorted(found.items())), tuple(problems), tuple(notes))


def _trusted(root: Path, trusted: bool | None) -> bool:
    if trusted is not None:
        return trusted

    return folder_trusted(root)


def _display(file: Any, source: str) -> str:
    return f"builtin_workflows/{file.name}" if source == "built-in" else str(file)


def load_workflow_file(file: Any, tools: Collection[str], *, source: str = "project") -> Workflow:
    """One workflow file, validated; WorkflowError `path:LINE: field: reason` if anything is wrong."""
    toml = read_toml(RegularFile(file) if isinstance(file, Path) else file, _display(file, source), WorkflowError)
    try:
        wf = _build(toml, Path(file.name).stem, set(tools))
    except _Problem as exc:
        raise WorkflowError(toml.at(exc.loc, exc.message)) from None
    return replace(wf, source=source, path=toml.where)


class _Problem(Exception):
    """What is wrong at `loc`, for load_workflow_file to put the file and the line in front of."""

    def __init__(self, loc: Loc, message: str) -> None:
        super().__init__(message)
        self.loc, self.message = loc, message


def _build(toml: TomlFile, stem: str, tools: set[str]) -> Workflow:
    data = load_checked(_File, toml, WorkflowError, strict=True)
    name = data.name or stem
    if not _NAME.match(name):
        raise _Problem(("name",), f"{name!r} is not a workflow name (letters, digits, - and _; at most 64)")
    params = data.params
    for i, p in enumerate(params):
        _check_param(("params", i), p)
    names = [p.name for p in params]
    twice = next((n for n in names if names.count(n) > 1), None)
    if twice:
        raise _Problem(("params",), f"{twice!r} is declared twice")
    steps = tuple(_step(toml, i, names, tools) for i in range(len(data.steps)))
    if not steps:
        raise _Problem(("steps",), "a workflow needs at least one [[steps]] table")
    return Workflow(name, data.title or name, data.description, data.category, params, steps)


def _check_param(where: Loc, p: Param) -> None:
    if p.type == "choice" and not p.choices:
        raise _Problem((*where, "choices"), "a choice parameter needs a non-empty choices list")
    if p.type != "choice" and p.choices:
        raise _Problem((*where, "choices"), f"only a choice parameter has choices (type is {p.type})")
    if p.must_exist and p.type != "path":
        raise _Problem((*where, "must_exist"), "only a path parameter can be required to exist")
    if p.required and p.default is not None:
        raise _Problem((*where, "default"), "a required parameter has no default (drop one of them)")
    if p.default is not None:
        expected = {"int": int, "bool": bool}.get(p.type, str)
        if type(p.default) is not expected:
            raise _Problem((*where, "default"), f"expected a {p.type} value, got {p.default!r}")
        if p.type == "choice" and p.default not in p.choices:
            raise _Problem((*where, "default"), f"{p.default!r} is not one of the choices")


def _step(toml: TomlFile, i: int, params: list[str], tools: set[str]) -> Step:
    where: Loc = ("steps", i)
    item = toml.data["steps"][i]
    if ("prompt" in item) == ("tool" in item):
        raise _Problem(where, "a step has either prompt = \"...\" or tool = \"NAME\", not both nor neither")
    kind: type[PromptStep | ToolStep] = PromptStep if "prompt" in item else ToolStep
    step = load_checked(kind, toml, WorkflowError, strict=True, part=where)
    if isinstance(step, PromptStep):
        _check_template((*where, "prompt"), step.prompt, params)
        for name in step.tools or ():
            if name not in tools:
                raise _Problem((*where, "tools"), f"unknown tool {name!r} (tools: {', '.join(sorted(tools))})")
        return step
    if step.tool not in tools:
        raise _Problem((*where, "tool"), f"unknown tool {step.tool!r} (tools: {', '.join(sorted(tools))})")
    _check_arguments(where, step, params)
    return step


def _check_arguments(where: Loc, step: ToolStep, params: list[str]) -> None:
    registry = Registry.builtin()
    if step.tool in registry:
        schema = registry.get(step.tool).parameters
        known = schema.get("properties", {})
        for name in step.arguments:
            if name not in known:
                raise _Problem((*where, "arguments", name), f"{step.tool} has no such argument "
                               f"(arguments: {', '.join(known)})")
        for name in schema.get("required", ()):
            if name not in step.arguments:
                raise _Problem((*where, "arguments"), f"{step.tool} needs the argument {name!r}")
        for name, value in step.arguments.items():
            if not any(PLACEHOLDER.search(text) for text in _strings(value)):
                problem = _schema_problem(known[name], value)
                if problem:
                    raise _Problem((*where, "arguments", name), problem)
    for name, value in step.arguments.items():
        for text in _strings(value):
            _check_template((*where, "arguments", name), text, params)


def _schema_problem(schema: dict[str, Any], value: Any) -> str | None:
    """What is wrong with a literal argument of a tool step, checked against its property's JSON Schema."""
    from jsonschema import Draft202012Validator  # deferred: jsonschema (40 ms), only for what the fast checks leave

    error = next(iter(Draft202012Validator(schema).iter_errors(value)), None)
    return error.message if error is not None else None


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)


def _check_template(where: Loc, text: str, params: list[str]) -> None:
    for match in PLACEHOLDER.finditer(text):
        inner = match.group(1).strip()
        if not re.match(_IDENT, inner):
            raise _Problem(where, f"{match.group(0)!r} is not a placeholder: only {{{{param}}}} is allowed")
        if inner not in params:
            known = ", ".join(params) or "none"
            raise _Problem(where, f"{{{{{inner}}}}} names no parameter (parameters: {known})")

"""The system prompt and the native tool schemas, both rendered from the registry's specs.

    builder = PromptBuilder(Registry.builtin())
    built = builder.build(PromptContext(protocol="json", task="add a test", files=("app.py",)))
    built.system, built.tools, built.schemas, built.key

The prompt: a preamble of rules; required then optional tools, grouped by category, each with its parameters
(type, required or optional, enum values, default), when to use it and examples in the active protocol's format;
tool-selection guidelines; how to call a tool (json protocol: the exact `{"tool","parameters","terminate"}`
object); then the context: workspace files, AGENTS.md, project facts. `detail="compact"` drops examples and "when
to use", keeps the first sentence of each description and leaves out the tools that run a sub-agent or keep a plan,
for small local models. A builder renders each distinct
input once (`renders` counts how often it did).
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections import OrderedDict
from dataclasses import fields
from typing import Any

from cli_agent.contracts import dataclass
from cli_agent.prompt.compact import LISTING_CHARS, ranked_listing, render_compact
from cli_agent.prompt.context import PromptContext
from cli_agent.tools import Registry, ToolSpec

MAX_AGENTS_MD_CHARS = 8000
MAX_STRING = 4000  # characters of one string in a constrained json-protocol reply (about 1k tokens)
CACHE_SIZE = 64

PREAMBLE = """\
You are cli-agent, a coding agent working on the files of the workspace "{workspace}" for the user.

Rules:
- Work only inside the workspace: every path is relative to its root, and nothing outside it can be reached.
- Read a file before you edit it, so your change matches its exact current text.
- Prefer edit_file for small changes; rewrite a whole file only when most of it changes.
- Make one logical change at a time, and check the result before the next one.
- Changes may need the user's approval. If one is denied, do not try it another way: stop and say so.
- At the end, say in a few lines what you did (files changed) and anything left undone."""

REQUIRED_INTRO = "These tools are essential for completing your task. Use them as needed."
OPTIONAL_INTRO = "These tools can enhance your work but are not required. Consider them only when:"

GUIDELINES = """\
# Tool selection guidelines
1. Identify what the task needs. If it needs no tool (a question you can answer), answer directly.
2. Explore before you change: find files with list_files or search, then read_file what you will edit.
3. Choose the smallest change: edit_file inside a file, create_file for a new file, write_file only to rewrite a
   whole file, delete_file only when the task asks for it.
4. Use an optional tool only when the task calls for it (see its "When to use").
5. Call tools in a logical order, one at a time, and re-evaluate after each result. If a call fails, read the
   error and fix the call instead of repeating it."""

JSON_PROTOCOL = """\
# How to call a tool
When you need a tool, output ONLY one JSON object, with nothing before or after it (no code fence, no comment):
{"tool": "<tool name>", "parameters": {<the tool's parameters>}, "terminate": false}
- "tool": the name of one of the tools above.
- "parameters": an object with that tool's parameters; leave out optional ones you do not need.
- "terminate": false = continue: the tool runs and its result comes back to you, then you decide the next step.
  "terminate": true = the tool runs and the run ends there, with no further request to you. Use true only when
  this call is the last thing the task needs.
Call one tool per reply. If your reply is not a valid tool call you get an error saying what is wrong: answer with
the corrected JSON object.
When no tool is needed (to answer a question, or to report what you did at the end), reply in plain text with no
JSON at all; that reply is your final answer."""

NATIVE_PROTOCOL = """\
# How to call a tool
Call tools through the native function-calling interface: the tools above are attached to this request as
functions, and the examples show their arguments as a native function call. Do not write tool calls as text.
When no tool is needed (to answer a question, or to report what you did at the end), reply in plain text; that
reply is your final answer."""

FACTS_INTRO = "These facts were confirmed by the user. Follow them."
FACTS_PROPOSE = ("You may propose a new fact or a change with propose_fact, but do not assume a proposal is "
                 "accepted until the user commits it.")
FACTS_NO_PROPOSE = "Do not assume any other fact is accepted until the user commits it."


@dataclass(frozen=True)
class BuiltPrompt:
    system: str
    tools: tuple[ToolSpec, ...]
    shared_schemas: tuple[dict[str, Any], ...]  # the builder's own, shared by every build: read `schemas` instead
    key: str  # sha256 of what the prompt was rendered from

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """OpenAI-style native tool schemas (the protocol decides whether they are sent): a fresh copy at each
        access, so a caller may change it without touching the builder's cache."""
        return copy.deepcopy(list(self.shared_schemas))


class PromptBuilder:
    """Renders prompts from one registry, memoised by the fingerprint of (registry, selected tools, context); the
    very same context again is a dictionary lookup (no selection, no hashing, no copy)."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry
        self.renders = 0
        self._cache: OrderedDict[str, BuiltPrompt] = OrderedDict()
        self._by_context: OrderedDict[PromptContext, BuiltPrompt] = OrderedDict()

    def build(self, ctx: PromptContext) -> BuiltPrompt:
        try:
            hit = self._by_context.get(ctx)
        except TypeError:  # a context holding lists instead of tuples cannot be a key: take the long way
            return self._build(ctx)
        if hit is None:
            hit = self._by_context[ctx] = self._build(ctx)
            if len(self._by_context) > CACHE_SIZE:
                self._by_context.popitem(last=False)
        self._by_context.move_to_end(ctx)
        return hit

    def _build(self, ctx: PromptContext) -> BuiltPrompt:
        tools = tuple(self.registry.model_tools(ctx.task, ctx.workflow, ctx.only_tools))
        if ctx.detail == "compact":  # a small model gets the file and command tools only: no sub-agent, no checklist
            tools = tuple(t for t in tools if not (t.runs_agent or t.updates_plan))
        # task and workflow matter only through the tools they select, so they are not part of the key
        inputs = {f.name: getattr(ctx, f.name) for f in fields(ctx) if f.name not in ("task", "workflow", "only_tools")}
        key = _sha256({"registry": self.registry.fingerprint, "tools": [t.name for t in tools], "ctx": inputs})
        cached = self._cache.get(key)
        if cached is None:
            self.renders += 1
            cached = BuiltPrompt(_render(ctx, tools), tools, tuple(native_schema(t, ctx.detail) for t in tools), key)
            self._cache[key] = cached
            if len(self._cache) > CACHE_SIZE:
                self._cache.popitem(last=False)
        self._cache.move_to_end(key)
        return cached


def native_schema(spec: ToolSpec, detail: str = "full") -> dict[str, Any]:
    description = _first_sentence(spec.description) if detail == "compact" else spec.description
    return {"type": "function", "function": {
        "name": spec.name, "description": description, "parameters": copy.deepcopy(spec.parameters)}}


def json_protocol_schema(tools: list[ToolSpec] | tuple[ToolSpec, ...]) -> dict[str, Any]:
    """A JSON Schema for constrained decoding of the json protocol: one branch per tool, plus `answer`. Every string
    is bounded (`maxLength`, `MAX_STRING` unless the tool's own schema is tighter): a small model at temperature 0
    can otherwise run on inside a string until the reply's token limit."""
    branches = []
    for spec in tools:
        if spec.name == "answer":
            raise ValueError("a tool named 'answer' collides with the json protocol's answer branch")
        parameters = _bound_strings(copy.deepcopy(spec.parameters))
        branches.append(_call_branch({"const": spec.name}, parameters, {"type": "boolean"}))
    text = {"type": "object", "properties": {"text": {"type": "string", "maxLength": MAX_STRING}},
            "required": ["text"],
            "additionalProperties": False}
    branches.append(_call_branch({"const": "answer"}, text, {"const": True}))
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "anyOf": branches}


def _bound_strings(schema: Any) -> Any:
    """The schema with `maxLength` on every string type that has none or a larger one (in place)."""
    if isinstance(schema, list):
        for item in schema:
            _bound_strings(item)
    elif isinstance(schema, dict):
        types = schema.get("type")
        if types == "string" or (isinstance(types, list) and "string" in types):
            schema["maxLength"] = min(int(schema.get("maxLength", MAX_STRING)), MAX_STRING)
        for value in schema.values():
            if isinstance(value, dict | list):
                _bound_strings(value)
    return schema


def _call_branch(tool: dict[str, Any], parameters: dict[str, Any], terminate: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "properties": {"tool": tool, "parameters": parameters, "terminate": terminate},
            "required": ["tool", "parameters", "terminate"], "additionalProperties": False}


def plan_fingerprint(system: str, schemas: list[dict[str, Any]] | None, options: dict[str, Any]) -> str:
    """sha256 of a request's plan (system prompt, tool schemas, options), as the trace and `prompt --json` show."""
    return _sha256({"system": system, "tools": schemas, "options": options})


def _sha256(payload: Any) -> str:
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8", "surrogatepass")).hexdigest()  # a file name may not be UTF-8


def _first_sentence(text: str) -> str:
    return re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip(), maxsplit=1)[0]


def _render(ctx: PromptContext, tools: tuple[ToolSpec, ...]) -> str:
    if ctx.detail == "compact":
        return render_compact(ctx, tools, _context_sections(ctx, tools))
    parts = [PREAMBLE.format(workspace=ctx.workspace_name)]
    required = [t for t in tools if not t.optional]
    optional = [t for t in tools if t.optional]
    if required:
        parts.append(_tool_section("Required tools", REQUIRED_INTRO, required, ctx))
    if optional:
        reasons = "\n".join(f"- {t.name}: {_first_sentence(t.when_to_use or t.description)}" for t in optional)
        parts.append(_tool_section("Optional tools", f"{OPTIONAL_INTRO}\n{reasons}", optional, ctx))
    if tools:
        parts.append(GUIDELINES)
        parts.append(JSON_PROTOCOL if ctx.protocol == "json" else NATIVE_PROTOCOL)
    parts.extend(_context_sections(ctx, tools))
    return "\n\n".join(parts) + "\n"


def _tool_section(title: str, intro: str, tools: list[ToolSpec], ctx: PromptContext) -> str:
    lines = [f"# {title}", intro]
    for category in dict.fromkeys(t.category for t in tools):
        lines += ["", f"## {category} tools"]
        for tool in (t for t in tools if t.category == category):
            lines += ["", _tool_block(tool, ctx)]
    return "\n".join(lines)


def _tool_block(tool: ToolSpec, ctx: PromptContext) -> str:
    full = ctx.detail == "full"
    lines = [f"### {tool.name} ({'optional' if tool.optional else 'required'})"]
    if ctx.protocol == "json":  # native: the attached function schema carries the description and parameters
        lines += [tool.description if full else _first_sentence(tool.description), "", *_parameter_lines(tool)]
    else:
        lines += [f"(Description and parameters: in the `{tool.name}` function attached to this request.)"]
    if tool.requires_approval:
        lines += ["", "**Needs approval:** " + ("it runs unasked; the file changes it makes are applied only once the "
                                                "user approves them." if tool.runs_command else
                                                "the user confirms this call before it runs.")]
    if full and tool.when_to_use:
        lines += ["", f"**When to use:** {tool.when_to_use}"]
    if full and tool.examples:
        lines += ["", _example_heading(tool, ctx.protocol)]
        for example in tool.examples:
            lines += [f"- {example.description}:", *_example_call(tool.name, example.input, ctx.protocol)]
    return "\n".join(lines)


def _parameter_lines(tool: ToolSpec) -> list[str]:
    properties = tool.parameters.get("properties", {})
    if not properties:
        return ["**Parameters:** none"]
    required = set(tool.required_params())
    lines = ["**Parameters:**"]
    for name, prop in properties.items():
        line = f"- `{name}` ({_type_label(prop)}, {'required' if name in required else 'optional'})"
        if prop.get("description"):
            line += f": {prop['description']}"
        if "enum" in prop:
            line += f" Valid values: {', '.join(json.dumps(v, ensure_ascii=False) for v in prop['enum'])}."
        if "default" in prop:
            line += f" Default: {json.dumps(prop['default'], ensure_ascii=False)}."
        lines.append(line)
    return lines


def _type_label(prop: dict[str, Any]) -> str:
    kind = prop.get("type")
    if isinstance(kind, list):
        return " or ".join(kind)
    if kind == "array" and isinstance(prop.get("items"), dict):
        return f"array of {_type_label(prop['items'])}"
    if kind:
        return str(kind)
    for key in ("anyOf", "oneOf"):
        if key in prop:
            return " or ".join(_type_label(p) for p in prop[key])
    return "enum" if "enum" in prop else "any"


def _example_heading(tool: ToolSpec, protocol: str) -> str:
    plural = "s" if len(tool.examples) > 1 else ""
    if protocol == "json":
        return f"**Example{plural}** (each JSON line is a complete reply):"
    return f"**Example{plural}** (native function call; the arguments are JSON values):"


def _example_call(name: str, arguments: dict[str, Any], protocol: str) -> list[str]:
    if protocol == "json":
        return [json.dumps({"tool": name, "parameters": arguments, "terminate": False}, ensure_ascii=False)]
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in arguments.items())
    return ["```", f"{name}({args})", "```"]


def verify_note(ctx: PromptContext, tools: tuple[ToolSpec, ...]) -> str | None:
    """Verify when possible: the test command, when one is known and run_command is offered."""
    if not ctx.test_command or not any(t.name == "run_command" for t in tools):
        return None
    return (f"Before your final answer, run the tests with run_command: `{ctx.test_command}`. If they fail, fix "
            "the cause and run them again.")


SKILLS_CHARS = {"full": 4000, "compact": 1500}  # the skill list's budget in the system prompt


def _instruction_sections(ctx: PromptContext, tools: tuple[ToolSpec, ...]) -> list[str]:
    """The project's instruction files (a lone root AGENTS.md under its old heading), then the skills, bounded."""
    sections = []
    if len(ctx.instructions) == 1 and ctx.instructions[0][0] == "AGENTS.md" and not ctx.instructions_note:
        sections.append(f"# Project instructions (AGENTS.md)\n{ctx.instructions[0][1]}")
    elif ctx.instructions:
        parts = [f"## {path}\n{text}" for path, text in ctx.instructions]
        note = [ctx.instructions_note] if ctx.instructions_note else []
        sections.append("\n\n".join(["# Project instructions (root first; a deeper folder's are more specific)",
                                      *parts, *note]))
    if ctx.skills and any(t.name == "skill" for t in tools):
        lines: list[str] = []
        budget = SKILLS_CHARS[ctx.detail]
        for name, description in ctx.skills:
            line = f"- {name}: {description}"
            if sum(len(x) + 1 for x in lines) + len(line) > budget:
                break
            lines.append(line)
        left = len(ctx.skills) - len(lines)
        if left:
            lines.append(f"- ... and {left} more skill(s) left out here; skill(name) loads any of them by name")
        sections.append("# Skills\nWhen the task matches a skill's description, call skill(name) first and follow "
                        "the instructions it returns.\n" + "\n".join(lines))
    return sections


def _context_sections(ctx: PromptContext, tools: tuple[ToolSpec, ...]) -> list[str]:
    shown, hidden = ranked_listing(ctx.files, LISTING_CHARS[ctx.detail])
    hidden += ctx.files_truncated
    if ctx.detail == "compact":
        listing = ", ".join(shown) or "(no files)"
        listing += f" ... and {hidden} more" if hidden else ""
        sections = [f"Files: {listing}"]
    else:
        lines = [f"- {path}" for path in shown] or ["(no files)"]
        if hidden:
            lines.append(f"... and {hidden} more")
        sections = ["\n".join([f"# Workspace: {ctx.workspace_name}", "Files (paths relative to the workspace root):",
                               *lines])]
    sections.extend(_instruction_sections(ctx, tools))
    if not ctx.instructions and ctx.agents_md and ctx.agents_md.strip():
        text = ctx.agents_md.strip()
        if len(text) > MAX_AGENTS_MD_CHARS:
            cut = len(text) - MAX_AGENTS_MD_CHARS
            text = f"{text[:MAX_AGENTS_MD_CHARS]}\n[... AGENTS.md cut here: {cut} more characters]"
        sections.append(f"# Project instructions (AGENTS.md)\n{text}")
    if ctx.facts:
        proposing = FACTS_PROPOSE if any(t.name == "propose_fact" for t in tools) else FACTS_NO_PROPOSE
        facts = "\n".join(f"- {fact}" for fact in ctx.facts)
        sections.append(f"# Project facts (authoritative)\n{FACTS_INTRO} {proposing}\n{facts}")
    verify = verify_note(ctx, tools)
    if verify:
        sections.append(verify if ctx.detail == "compact" else f"# Verify\n{verify}")
    return sections

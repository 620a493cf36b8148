"""MCP tools as the registry's ToolSpecs, and MCP results as envelopes.

A server's tool `status` becomes the spec `git__status` (server name, two underscores, tool name) in the category
"git (MCP server)", with the server's JSON Schema as its parameters, validated like any spec's: a tool whose
schema or name cannot be used is skipped with a note naming the server and the tool. Every MCP tool asks for
approval unless the user's config says `approval = "never"` for it or its server; the server's `readOnlyHint` is
shown in its description, never taken as a permission.

A result becomes `{ok, data}`: the text parts joined, the structured content, and a one-line note for each image,
audio clip, resource or link (with its type and size; the bytes are not passed on). `isError` becomes a failed
envelope. Whatever a server sends, a result keeps at most `MAX_RESULT_CHARS` characters, so a 10 MB answer costs a
cut, never the trace or the context.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Iterable
from typing import Any

from cli_agent.config import McpServer
from cli_agent.contracts import Envelope
from cli_agent.tools import ToolSpec, unbounded_keywords, validate_parameters

__all__ = ["category_for", "split_name"]

SEPARATOR = "__"
MAX_RESULT_CHARS = 1_000_000
MANY_TOOLS_CHARS = 24_000  # the specs of every MCP tool together past this: they become optional, picked by hints
_COMMON = frozenset({"tool", "tools", "with", "from", "into", "list", "file", "files", "data", "item", "items"})
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")  # a spec's whole name (fullmatch: `$` would let "\n" in)
_TOOL_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")  # a server's own name for a tool


def plain_tools(server_name: str, tools: Iterable[Any]) -> tuple[list[Any], list[str]]:
    """The tools whose names are plain identifiers (1-64 letters, digits, '_' or '-'), and a note for each other
    one: a name with a newline, an escape sequence, a path, spaces or hundreds of characters is never listed, shown
    or offered to the model. The note shows the name escaped (`ascii`) and cut."""
    kept: list[Any] = []
    notes: list[str] = []
    for tool in tools:
        name = getattr(tool, "name", None)
        if isinstance(name, str) and _TOOL_NAME.fullmatch(name):
            kept.append(tool)
            continue
        shown = ascii(name)
        shown = shown if len(shown) <= 60 else shown[:57] + "..."
        notes.append(f"mcp server {server_name!r}: a tool named {shown} was refused: a tool name must be 1-64 "
                     "letters, digits, '_' or '-'")
    return kept, notes


def category_for(server: str) -> str:
    return f"{server} (MCP server)"


def split_name(name: str) -> tuple[str, str] | None:
    """("git", "status") for "git__status"; None for a name that is not an MCP tool's."""
    server, sep, tool = name.partition(SEPARATOR)
    return (server, tool) if sep and server and tool else None


def spec_for(server_name: str, server: McpServer, tool: Any, *, optional: bool = False) -> ToolSpec | str:
    """The spec of one MCP tool, or the note saying why it is skipped."""
    name = f"{server_name}{SEPARATOR}{tool.name}"
    where = f"mcp server {server_name!r}: tool {tool.name[:80]!r}"
    if not _NAME.fullmatch(name):
        return f"{where} skipped: {name[:80]!r} is not a usable tool name (letters, digits, '_' or '-', at most 64)"
    schema = tool.input_schema if isinstance(tool.input_schema, dict) else None
    problem = validate_parameters(schema) or unbounded_keywords(schema)
    if problem:
        return f"{where} skipped: its input schema cannot be used ({problem})"
    assert schema is not None
    hints = _annotation_notes(tool)
    description = " ".join((tool.description or tool.title or f"The {tool.name} tool.").split())
    if hints:
        description += f" (The server says: {', '.join(hints)}.)"
    words = {w for w in re.split(r"[_\-\s.]+", tool.name) if len(w) >= 4 and w.lower() not in _COMMON}
    note = f"a tool of the MCP server {server_name!r} (from your {server.origin.split(' (')[0]})" + (
        f"; the server says: {', '.join(hints)} (its own claim, not checked)" if hints else "")
    return ToolSpec(name=name, category=category_for(server_name), description=description[:4000],
                    approval_note=note,
                    when_to_use=f"When the task needs {tool.name.replace('_', ' ')} from {server_name}.",
                    optional=optional, requires_approval=server.approval_for(tool.name) != "never",
                    exposed_to_model=True, mutates=False, kind=_kind(tool), verb=name,
                    destructive=bool(getattr(getattr(tool, "annotations", None), "destructive_hint", False)),
                    hints=tuple(re.escape(h) for h in sorted({server_name, tool.name, *words})),
                    parameters={k: v for k, v in schema.items() if k != "$schema"})


def _kind(tool: Any) -> str:
    """An MCP tool's kind: "read" when its server says it only reads, else "other" (the server's own claim)."""
    annotations = getattr(tool, "annotations", None)
    return "read" if annotations is not None and annotations.read_only_hint else "other"


def _annotation_notes(tool: Any) -> list[str]:
    notes = []
    annotations = getattr(tool, "annotations", None)
    if annotations is not None:
        if annotations.read_only_hint:
            notes.append("read-only")
        if annotations.destructive_hint:
            notes.append("destructive")
        if annotations.open_world_hint:
            notes.append("reaches outside systems")
    return notes


def specs_for_servers(listed: Iterable[tuple[str, McpServer, Iterable[Any]]],
                      builtin_names: Iterable[str]) -> tuple[list[ToolSpec], list[str]]:
    """The specs of every ready server's tools, and the notes: skipped tools, a tool listed twice, the same tool
    name on several servers, a tool named like a built-in. Past `MANY_TOOLS_CHARS` they are all optional."""
    builtins = set(builtin_names)
    pending: list[tuple[str, McpServer, Any]] = []
    notes: list[str] = []
    seen: dict[str, list[str]] = {}
    for server_name, server, tools in listed:
        names: set[str] = set()
        for tool in tools:
            if tool.name in names:
                notes.append(f"mcp server {server_name!r}: tool {tool.name[:80]!r} is listed twice; the first is used")
                continue
            names.add(tool.name)
            seen.setdefault(tool.name, []).append(server_name)
            if tool.name in builtins:
                notes.append(f"mcp server {server_name!r}: tool {tool.name!r} has the name of a built-in tool; it "
                             f"is offered as {server_name}{SEPARATOR}{tool.name}, and {tool.name} stays the "
                             "built-in")
            pending.append((server_name, server, tool))
    for tool_name, servers in seen.items():
        if len(servers) > 1:
            offered = ", ".join(f"{s}{SEPARATOR}{tool_name}" for s in servers)
            notes.append(f"mcp servers {', '.join(repr(s) for s in servers)} each have a tool {tool_name!r}: "
                         f"offered as {offered}")
    specs: list[ToolSpec] = []
    for server_name, server, tool in pending:
        spec = spec_for(server_name, server, tool)
        if isinstance(spec, ToolSpec):
            specs.append(spec)
        else:
            notes.append(spec)
    if sum(_size(s) for s in specs) > MANY_TOOLS_CHARS:
        specs = [dataclasses.replace(s, optional=True) for s in specs]
        notes.append(f"{len(specs)} MCP tools: each is offered when the task mentions it or its server")
    return specs, notes


def _size(spec: ToolSpec) -> int:
    return len(spec.description) + len(json.dumps(spec.parameters))


# -- results ----------------------------------------------------------------------------------------------------

def envelope_for(server: str, tool: str, result: Any) -> Envelope:
    """The envelope of a CallToolResult: text, structured content and notes, at most MAX_RESULT_CHARS."""
    texts: list[str] = []
    items: list[str] = []
    for block in result.content or ():
        kind = getattr(block, "type", "")
        if kind == "text":
            texts.append(block.text)
        elif kind in ("image", "audio"):
            items.append(f"[{kind}: {block.mime_type}, {_decoded_size(block.data):,} bytes; not shown to the model]")
        elif kind == "resource":
            resource = block.resource
            if getattr(resource, "text", None) is not None:
                texts.append(f"[resource {resource.uri}]\n{resource.text}")
            else:
                mime = getattr(resource, "mime_type", None) or "binary"
                items.append(f"[resource {resource.uri}: {mime}, {_decoded_size(resource.blob):,} bytes; not shown]")
        elif kind == "resource_link":
            items.append(f"[resource link {block.uri}: {block.name}]")
        else:
            items.append(f"[{kind or 'unknown'} content; not shown]")
    structured = getattr(result, "structured_content", None)
    warnings: list[str] = []
    if structured is not None:
        if texts and all(_parses_to(text, structured) for text in texts):
            texts = []  # the text is the structured content as JSON: once is enough
        elif len(texts) == 1 and _wraps(structured, texts[0]):
            structured = None  # {"result": <the text>}: the text says it all
        if len(json.dumps(structured, default=str)) > MAX_RESULT_CHARS:
            structured = None
            warnings.append(f"the structured content of {server}{SEPARATOR}{tool} was over {MAX_RESULT_CHARS:,} "
                            "characters and was left out")
    text, cut = _capped("\n".join(texts))
    if cut:
        warnings.append(f"the result of {server}{SEPARATOR}{tool} was {cut:,} characters too long and was cut")
    data: dict[str, Any] = {"server": server}
    if text:
        data["text"] = text
    if items:
        data["items"] = items
    if structured is not None:
        data["structured"] = structured
    if getattr(result, "is_error", False):
        first = (text or "; ".join(items) or "no details").strip().splitlines()[0][:300]
        return Envelope.failure(f"mcp server {server!r}: {tool} failed: {first}", data=data, warnings=warnings)
    return Envelope.success(data, warnings=warnings)


def _capped(text: str) -> tuple[str, int]:
    if len(text) <= MAX_RESULT_CHARS:
        return text, 0
    cut = len(text) - MAX_RESULT_CHARS
    return text[:MAX_RESULT_CHARS] + f"\n[... {cut:,} more characters from the server left out]", cut


def _parses_to(text: str, value: Any) -> bool:
    try:
        return bool(json.loads(text) == value)
    except ValueError:
        return False


def _wraps(structured: Any, text: str) -> bool:
    if not (isinstance(structured, dict) and list(structured) == ["result"]):
        return False
    return structured["result"] == text or _parses_to(text, structured["result"])


def _decoded_size(data: str | None) -> int:
    """The size of base64 `data` once decoded, without decoding it."""
    if not data:
        return 0
    return max(0, len(data) * 3 // 4 - data[-2:].count("="))

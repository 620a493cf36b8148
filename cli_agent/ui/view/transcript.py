"""What a tool call did, said in one line: the compact transcript's read-only calls and every result line.

    Read(app.py) ⎿ 10 lines
    Search("TODO") ⎿ 3 matches in 2 files (stopped at 200: more may exist)
    git__status(short=true) ⎿ On branch main … (+4 lines)

An MCP tool's result is summed up by its first line of text (else its structured content, else its items), cut to
fit the terminal's width with how much more there is, so it takes one line as a built-in tool's does.

The line says what the model actually received: a read whose result was cut to fit `tool_result_max_chars` says
which lines got through, not the lines the tool returned. Everything that came from the model or a file is escaped
(`escape_for_terminal`) and goes into a `Text`, never into markup.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cli_agent.contracts import ToolCall, ToolResult
from cli_agent.contracts import escape_for_terminal as esc

if TYPE_CHECKING:
    from cli_agent.tools import ToolSpec

__all__ = ["changes_nothing", "result_line"]

_DONE = {"create": "created", "edit": "edited", "write": "rewritten", "delete": "deleted"}
_ESCAPE = re.compile(r'\\(u[0-9a-fA-F]{4}|.)|"')
_ARG_CHARS = 60  # characters of a call's target shown in its one line
_MCP_ARG_CHARS = 30  # characters of an MCP call's arguments shown in its one line
_MIN_ROOM = 16  # a summary gets at least this many characters, however narrow the terminal


def _is_mcp(tool: str) -> bool:
    from cli_agent.mcp import split_name  # deferred: the MCP client (asyncio, the SDK), only with servers

    return split_name(tool) is not None


def _builtin_spec(tool: str) -> ToolSpec | None:
    from cli_agent.tools import Registry  # deferred: the agent's stack loads behind the REPL's first prompt (Startup)

    builtin = Registry.builtin()
    return builtin.get(tool) if tool in builtin else None


def verb_of(tool: str) -> str:
    """The word a call is shown with, `Read`: a built-in tool's spec says it; any other tool goes by its name."""
    spec = _builtin_spec(tool)
    return spec.verb if spec is not None else tool


def changes_nothing(tool: str) -> bool:
    """Whether `tool` is a built-in tool that changes nothing (its spec does not mutate): its calls take one line
    when nobody says otherwise."""
    spec = _builtin_spec(tool)
    return spec is not None and not spec.mutates


def target_of(call: ToolCall | None) -> str:
    """The argument a call is about: its path, else its pattern, else ""."""
    args = (call.arguments if call is not None else None) or {}
    for key in ("path", "pattern", "text", "description", "url"):
        if isinstance(args.get(key), str):
            return args[key]
    return ""


def call_label(call: ToolCall | None, tool: str) -> Text:
    """`Read(app.py)`, `Search("TODO", src)`: the verb of a known tool, the name of any other."""
    args = (call.arguments if call is not None else None) or {}
    verb = verb_of(tool)
    if tool == "search" and isinstance(args.get("pattern"), str):
        inner = json.dumps(args["pattern"], ensure_ascii=False)
        if isinstance(args.get("path"), str) and args["path"] not in ("", "."):
            inner += ", " + args["path"]
    elif _is_mcp(tool) and args:
        inner = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in args.items())
        if len(inner) > _MCP_ARG_CHARS:
            inner = inner[:_MCP_ARG_CHARS - 1] + "…"
    else:
        inner = target_of(call)
    if len(inner) > _ARG_CHARS:
        inner = inner[:_ARG_CHARS - 1] + "…"
    return Text.assemble((esc(verb), "bold"), ("(" + esc(inner) + ")" if inner else ""))


def received_lines(envelope_json: str, model_chars: int) -> int:
    """How many lines of a read_file result's `content` are in the first `model_chars` characters of its JSON:
    the last line counted may be partial."""
    head = envelope_json[:model_chars]
    start = head.find('"content": "')
    if start < 0:
        return 0
    lines, pos = 0, start + len('"content": "')
    for m in _ESCAPE.finditer(head, pos):
        if m.group(0) == '"':
            return lines + 1  # the whole content got through
        if m.group(1) == "n":
            lines += 1
    return lines + (1 if len(head) > pos else 0)


def _clip(text: str, room: int) -> str:
    return text if len(text) <= room else text[:max(room - 1, 1)] + "…"


def mcp_summary(data: Any, room: int = 80) -> str:
    """An MCP result in at most `room` characters: its first line of text and how many more lines there are, else
    its structured content as JSON, else its items (images, resources…), else "no content"."""
    room = max(room, _MIN_ROOM)
    if not isinstance(data, dict):
        return ""
    text = data.get("text")
    if isinstance(text, str) and text.strip():
        lines = [" ".join(line.split()) for line in text.strip().splitlines()]
        lines = [line for line in lines if line]
        more = f" (+{len(lines) - 1:,} lines)" if len(lines) > 1 else ""
        if len(lines) == 1 and len(lines[0]) > room:
            more = f" ({len(text):,} chars)"
        return esc(_clip(lines[0], room - len(more))) + more
    if data.get("structured") is not None:
        return esc(_clip(json.dumps(data["structured"], ensure_ascii=False, default=str), room))
    items = data.get("items")
    if isinstance(items, list) and items:
        more = f" (+{len(items) - 1:,} more)" if len(items) > 1 else ""
        return esc(_clip(str(items[0]), room - len(more))) + more
    return "no content"


def data_summary(tool: str, data: Any, envelope_json: str = "", model_chars: int = 0, room: int = 80) -> str:
    """What a read-only result holds: lines, matches (and in how many files), entries, an MCP tool's first line;
    `model_chars` > 0 when the model got only that much of the result; `room`: the characters an MCP summary may
    take."""
    if not isinstance(data, dict):
        return ""
    if _is_mcp(tool):
        return mcp_summary(data, room)
    if "total_lines" in data:
        if data.get("binary"):
            return esc(str(data.get("notice", "binary file")))
        start, end, total = data.get("start_line", 0), data.get("end_line", 0), data["total_lines"]
        if model_chars and envelope_json:
            end = min(end, start + max(received_lines(envelope_json, model_chars), 1) - 1)
        shown = f"{end - start + 1:,} line{'s' if end != start else ''}" if total else "empty file"
        if total and (start != 1 or end != total):
            shown = f"lines {start:,}-{end:,} of {total:,}"
        return shown
    if "matches" in data:
        matches = data.get("matches") or []
        files = data.get("files_with_matches")
        if not isinstance(files, int):  # counted from the lines shown
            files = len({m.get("path") for m in matches if isinstance(m, dict)})
        count = data.get("total", data.get("count", len(matches)))
        out = f"{count:,} match{'es' if count != 1 else ''}" + (f" in {files:,} file{'s' if files != 1 else ''}"
                                                                 if count else "")
        if data.get("truncated"):
            out += f" (capped: {data.get('notice') or 'more may exist'})"
        return out
    if "entries" in data:
        count = data.get("count", len(data.get("entries") or []))
        return f"{count:,} entries" + (" (the first shown: more exist)" if data.get("truncated") else "")
    if "plan" in data and "summary" in data:  # update_plan
        return esc(str(data["summary"]))
    if "answer" in data and "steps" in data:  # task: the helper's steps; its answer is the model's to read
        return f"{data['steps']} step{'s' if data['steps'] != 1 else ''} (/expand)"
    if "content" in data and "status" in data:  # web_fetch
        return f"{len(str(data['content'])):,} characters" + (f" · {esc(str(data['title']))}" if data.get("title")
                                                                else "")
    return ""


def _cut_note(result: ToolResult) -> str:
    total = len(result.envelope.to_json())
    return (f"cut to fit: the model got {result.model_chars:,} of {total:,} characters"
            if result.model_chars else "")


def compact_line(result: ToolResult, call: ToolCall | None, *, first: bool = True, width: int = 80) -> Text:
    """A read-only call in one line: `● Read(app.py) ⎿ 10 lines`, or `✗` and the error; `first=False` for the
    next lines of a group of consecutive calls; `width`: the terminal's, which an MCP summary fits in."""
    env = result.envelope
    line = Text("● " if first else "  ", style="green" if env.ok else "red")
    line.append_text(call_label(call, result.tool))
    line.append(" ⎿ ", style="dim")
    if not env.ok:
        line.append("✗ " + esc("; ".join(env.errors) or "failed"), style="red")
        return line
    envelope_json = env.to_json() if result.model_chars else ""
    line.append(data_summary(result.tool, env.data, envelope_json, result.model_chars,
                             room=width - line.cell_len - 1) or "done")
    cut = _cut_note(result)
    if cut:
        line.append(f"  ({cut})", style="yellow")
    return line


def result_line(result: ToolResult, call: ToolCall | None = None, approved_by: str = "", *, width: int = 80) -> Text:
    """One line per result of a call shown in its panel: ✓ and what changed, or ✗ and the error in red; then its
    warnings, and a note when the model got only part of it. `width`: the terminal's, which an MCP summary fits
    in."""
    name = Text(esc(result.tool), style="bold")
    target = esc(target_of(call))
    env = result.envelope
    if not env.ok:
        line = Text.assemble(("  ✗ ", "bold red"), name, (" " + target if target else ""), ": ",
                             (esc("; ".join(env.errors) or "failed"), "red"))
    else:
        if result.change is not None:
            added, removed = result.change.stats()
            detail = f"{esc(result.change.path)}  {_DONE[result.change.kind]} (+{added} -{removed} lines)"
        else:
            envelope_json = env.to_json() if result.model_chars else ""
            used = 5 + len(result.tool) + len(target) + (len(approved_by) + 17 if approved_by else 0)
            detail = " ".join(x for x in (target, data_summary(result.tool, env.data, envelope_json,
                                                               result.model_chars, room=width - used)) if x)
        line = Text.assemble(("  ✓ ", "bold green"), name, " ", detail)
        if approved_by:
            said = approved_by if approved_by.startswith(("allowed by rule", "--yes answered")) \
                or approved_by.endswith("approved for this session") else f"approved by {approved_by}"
            line.append(f"  ({esc(said)})", style="dim")
    for warning in env.warnings:
        line.append("\n    ! " + esc(warning), style="yellow")
    cut = _cut_note(result)
    if cut:
        line.append(f"\n    ! {cut}", style="yellow")
    return line

"""`/expand`: the last turn whole, in the order it happened: each thought, each plan update as its checklist, and
each call with its result, a command with all of its output that was kept, any other call with what it gave the
model (a file's lines, a page's text, a search's matches), bounded with `…`.

    ✻ thinking
    The failing test imports parse from a.py, so read a.py first.
    ╭─ read_file a.py ─╮ …
      ✓ read_file a.py  lines 1-3 of 3
        │ def parse(text):
        │ …
"""

from __future__ import annotations

import json
from typing import Any

from rich.console import RenderableType
from rich.text import Text

from cli_agent.contracts import HookRan, PlanUpdated, ToolResult
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.command_panel import command_expanded
from cli_agent.ui.view.plan_view import plan_text
from cli_agent.ui.view.render import call_panel, hung
from cli_agent.ui.view.transcript import result_line

__all__ = ["expanded"]

MOST_LINES = 40  # of one result's content
MOST_CHARS = 4000
_CONTENT = ("content", "text", "output", "matches", "entries", "answer")  # what a result gave the model, in order


def expanded(turn: list[Any], width: int) -> list[RenderableType]:
    """What `/expand` prints for `turn` (the renderer's: thoughts, plan updates, (call, result) pairs)."""
    out: list[RenderableType] = []
    for entry in turn:
        if isinstance(entry, str):
            out.append(Text("✻ thinking\n" + esc(entry.strip()), style="dim italic"))
        elif isinstance(entry, PlanUpdated):
            out.append(plan_text(entry, width))
        elif isinstance(entry, HookRan):
            out.append(_hook(entry))
        else:
            out.extend(_call(*entry, width=width))
    return out


def _call(call: Any, result: ToolResult, *, width: int) -> list[RenderableType]:
    data = result.envelope.data
    if isinstance(data, dict) and "exit_code" in data:
        return [command_expanded(call, result)]
    if isinstance(data, dict) and isinstance(data.get("plan"), list):  # update_plan: its checklist is drawn above
        return []
    out: list[RenderableType] = [call_panel(call)] if call is not None else []
    out.append(hung(result_line(result, call, width=width)))
    body = _body(data)
    if body:
        out.append(Text("\n".join(f"    │ {esc(line)}" for line in body.splitlines()), style="dim"))
    if isinstance(data, dict) and data.get("notice"):
        out.append(Text("    " + esc(str(data["notice"])), style="dim"))
    return out


def _hook(event: HookRan) -> RenderableType:
    """A hook that ran: its whole command, how it ended, and what it printed (bounded)."""
    how = "timed out (killed)" if event.timed_out else "blocked" if event.blocked else f"exit {event.exit_code}"
    text = Text(f"⚑ {event.event} hook: {how}\n    $ {esc(event.command)}", style="dim")
    for name, said in (("stdout", event.stdout), ("stderr", event.stderr)):
        if said.strip():
            text.append(f"\n    {name}:\n" + "\n".join(f"    │ {esc(line)}" for line in _bounded(said).splitlines()))
    return text


def _body(data: Any) -> str:
    """What the result gave the model, at most MOST_LINES lines and MOST_CHARS characters (cut with `…`)."""
    if not isinstance(data, dict):
        return "" if data is None else _bounded(str(data))
    for key in _CONTENT:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            return _bounded(value)
        if isinstance(value, list) and value:
            return _bounded("\n".join(v if isinstance(v, str) else json.dumps(v, ensure_ascii=False) for v in value))
    return ""


def _bounded(text: str) -> str:
    lines = text.rstrip("\n").splitlines()
    kept = "\n".join(lines[:MOST_LINES])
    cut = len(lines) > MOST_LINES or len(kept) > MOST_CHARS
    kept = kept[:MOST_CHARS]
    return kept + (f"\n… {len(lines) - len(kept.splitlines())} more lines" if cut else "")

"""What the MCP tests share: a one-shot run with the scripted model (in-process), a call, and a trace's warnings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_agent.cli.main import run
from cli_agent.contracts.events import Warning as WarningEvent
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider


def one_shot(ws: Path, trace: Path, *replies: Any, flags: tuple[str, ...] = ()) -> tuple[int, ScriptedProvider]:
    provider = ScriptedProvider(list(replies), native_tools=True)
    code = run(["-C", str(ws), "-p", "go", "--model", "x", "--trace", str(trace), "--output", "json", *flags],
               provider_factory=lambda settings: provider)
    return code, provider


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def warnings(trace: Path) -> list[str]:
    return [e.message for e in read_trace(trace).events if isinstance(e, WarningEvent)]

"""The offline scenarios and the live tasks, as data: `offline.toml` and `live.toml` beside this module.

An offline scenario sets up a workspace (`files`, `symlinks`, and always an `outside/` folder next to it that must
stay untouched), runs one prompt against scripted `replies` with the given settings, and checks `[expect]`:

    exit_code, stop_reason, requests (model requests made), replies_left (default 0), results (each tool result
    as "tool:ok" / "tool:error", in order), files (path -> exact content), absent (paths), told (a list of
    {request = N, contains = "..."}: what the model was told just before request N), answer_contains,
    pending_facts, committed_facts

`{outside}` and `{workspace}` in replies and link targets become the absolute paths of those folders.
A live task sets up `files`, gives `prompt`, and checks `[check]`: run (a script run with this Python; `stdout`
is then what it must print), python (code that must exit 0 in the workspace), answer_contains, unchanged.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from cli_agent.contracts.errors import UsageError

__all__ = ["LiveTask", "Scenario", "load_live_tasks", "load_scenarios"]

_SCENARIO_KEYS = {"name", "covers", "prompt", "protocol", "yes", "files", "symlinks", "locks", "max_steps",
                  "timeout", "replies", "expect"}
_EXPECT_KEYS = {"exit_code", "stop_reason", "requests", "replies_left", "results", "files", "absent", "told",
                "answer_contains", "pending_facts", "committed_facts"}
_TASK_KEYS = {"name", "prompt", "files", "check"}
_CHECK_KEYS = {"run", "stdout", "python", "answer_contains", "unchanged"}


@dataclass(frozen=True)
class Scenario:
    name: str
    covers: str
    prompt: str
    replies: list[dict[str, Any]]
    expect: dict[str, Any]
    protocol: str = "native"
    yes: bool = False
    files: dict[str, str] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)
    locks: list[str] = field(default_factory=list)
    max_steps: int = 10
    timeout: float = 30.0


@dataclass(frozen=True)
class LiveTask:
    name: str
    prompt: str
    check: dict[str, Any]
    files: dict[str, str] = field(default_factory=dict)


def _data(name: str) -> list[dict[str, Any]]:
    text = resources.files("cli_agent.eval").joinpath(name).read_text(encoding="utf-8")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"cli_agent/eval/{name}: invalid TOML: {exc}") from None
    key = "scenario" if name == "offline.toml" else "task"
    items = data.get(key)
    if not isinstance(items, list) or not items:
        raise UsageError(f"cli_agent/eval/{name}: no [[{key}]] tables")
    return items


def _unknown(where: str, given: dict[str, Any], known: set[str]) -> None:
    extra = sorted(set(given) - known)
    if extra:
        raise UsageError(f"cli_agent/eval/{where}: unknown key(s) {', '.join(extra)}")


def _entries(file: str, keys: set[str], nested: str, nested_keys: set[str]) -> list[dict[str, Any]]:
    """The [[tables]] of one suite file, each checked for unknown keys (its own and its `nested` table's) and
    their names unique."""
    entries = _data(file)
    for raw in entries:
        name = str(raw.get("name", "?"))
        _unknown(f"{file} [{name}]", raw, keys)
        _unknown(f"{file} [{name}.{nested}]", raw.get(nested, {}), nested_keys)
    names = [str(raw.get("name", "?")) for raw in entries]
    if len(set(names)) != len(names):
        raise UsageError(f"cli_agent/eval/{file}: names must be unique")
    return entries


def load_scenarios(only: str | None = None) -> list[Scenario]:
    out = []
    for raw in _entries("offline.toml", _SCENARIO_KEYS, "expect", _EXPECT_KEYS):
        if not raw.get("replies") or "prompt" not in raw:
            raise UsageError(f"cli_agent/eval/offline.toml [{raw.get('name', '?')}]: needs prompt and replies")
        out.append(Scenario(**raw))
    return [s for s in out if not only or only in s.name]


def load_live_tasks(only: str | None = None) -> list[LiveTask]:
    tasks = [LiveTask(**raw) for raw in _entries("live.toml", _TASK_KEYS, "check", _CHECK_KEYS)]
    return [t for t in tasks if not only or only in t.name]

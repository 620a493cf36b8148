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

import dataclasses
from dataclasses import field
from importlib import resources
from typing import Any

from cli_agent.contracts import UsageError, dataclass
from cli_agent.validated import TomlFile, load_checked, read_toml, rule


@dataclass(frozen=True, kw_only=True)
class _Given:
    def given(self) -> dict[str, Any]:
        """The keys the file gives (the others are None), as a table."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self) if getattr(self, f.name) is not None}


@dataclass(frozen=True, kw_only=True)
class Expect(_Given):
    exit_code: int | None = None
    stop_reason: str | None = None
    requests: int | None = None
    replies_left: int | None = None
    results: list[str] | None = None
    files: dict[str, str] | None = None
    absent: list[str] | None = None
    told: list[dict[str, Any]] | None = None
    answer_contains: str | None = None
    pending_facts: int | None = None
    committed_facts: int | None = None


@dataclass(frozen=True, kw_only=True)
class Scenario:
    name: str
    covers: str
    prompt: str
    replies: list[dict[str, Any]] = rule(min_length=1)
    expect: Expect = field(default_factory=Expect)
    protocol: str = "native"
    yes: bool = False
    files: dict[str, str] = field(default_factory=dict)
    symlinks: dict[str, str] = field(default_factory=dict)
    locks: list[str] = field(default_factory=list)
    max_steps: int = 10
    timeout: float = 30.0


@dataclass(frozen=True, kw_only=True)
class Check(_Given):
    run: str | list[str] | None = None
    stdout: str | None = None
    python: str | None = None
    answer_contains: str | None = None
    unchanged: bool | None = None


@dataclass(frozen=True, kw_only=True)
class LiveTask:
    name: str
    prompt: str
    check: Check
    files: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class _Offline:
    scenario: tuple[Scenario, ...] = rule(min_length=1)


@dataclass(frozen=True, kw_only=True)
class _Live:
    task: tuple[LiveTask, ...] = rule(min_length=1)


def _suite(name: str) -> TomlFile:
    return read_toml(resources.files("cli_agent.eval").joinpath(name), f"cli_agent/eval/{name}", UsageError)


def _unique(toml: TomlFile, key: str, names: list[str]) -> None:
    for i, name in enumerate(names):
        if name in names[:i]:
            raise UsageError(toml.at((key, i, "name"), f"{name!r} is used twice: names must be unique"))


def load_scenarios(only: str | None = None) -> list[Scenario]:
    toml = _suite("offline.toml")
    scenarios = list(load_checked(_Offline, toml, UsageError).scenario)
    _unique(toml, "scenario", [s.name for s in scenarios])
    return [s for s in scenarios if not only or only in s.name]


def load_live_tasks(only: str | None = None) -> list[LiveTask]:
    toml = _suite("live.toml")
    tasks = list(load_checked(_Live, toml, UsageError).task)
    _unique(toml, "task", [t.name for t in tasks])
    return [t for t in tasks if not only or only in t.name]

"""The tool registry: validated specs plus their handlers, and which of them the model is offered.

    registry = Registry.builtin()                  # the packaged specs + tools.handlers.handlers(), loaded once
    registry.model_tools("remember: tabs only")    # required tools, plus optional ones the task hints at

An optional tool is offered only when one of its `hints` (a regex, matched case-insensitively as whole words)
occurs in the task text or the workflow name; a workflow's `only` list restricts the set and also switches on the
optional tools it names.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import hashlib
import json
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from pathlib import Path
from typing import Any

from cli_agent.contracts import CliAgentError, SpecError, UsageError
from cli_agent.fs import paths
from cli_agent.tools.handlers import handlers
from cli_agent.tools.specs import ToolSpec, builtin_spec_dir, content_key, load_specs

__all__ = ["Registry"]

# Categories in the order the prompt shows them; any other category follows, alphabetically.
CATEGORY_ORDER: tuple[str, ...] = ("Explore", "Edit", "Run", "Project knowledge", "Plan and delegate")


class Registry:
    """Specs by name (kept in category order, then by name) with their handlers. Immutable once built."""

    def __init__(self, specs: Iterable[ToolSpec], handlers: Mapping[str, Callable[..., Any]], *,
                 optional_budget: int | None = None) -> None:
        """`optional_budget`: at most this many characters (descriptions and schemas) of hinted optional tools are
        offered at once, the first hinted first (many MCP tools); None: every hinted one."""
        self.optional_budget = optional_budget
        by_name: dict[str, ToolSpec] = {}
        for spec in specs:
            if spec.name in by_name:
                raise SpecError(f"tool {spec.name!r} is defined twice")
            by_name[spec.name] = spec
        rank = {category: i for i, category in enumerate(CATEGORY_ORDER)}
        ordered = sorted(by_name.values(), key=lambda s: (rank.get(s.category, len(rank)), s.category, s.name))
        self._specs: dict[str, ToolSpec] = {spec.name: spec for spec in ordered}
        self._handlers = {name: handlers[name] for name in self._specs if name in handlers}
        self._hints = {spec.name: _hint_pattern(spec.hints) for spec in ordered}
        self.fingerprint = _fingerprint(ordered, self._handlers)

    @classmethod
    def load(cls, dirs: Iterable[Any], handlers: Mapping[str, Callable[..., Any]]) -> Registry:
        return cls(load_specs(dirs, handlers), handlers)

    @classmethod
    def builtin(cls) -> Registry:
        """The packaged specs with the built-in handlers, validated once per process; their JSON Schema checks run
        once per content of the files (see `load_remembered`)."""
        return _builtin()

    def without(self, names: Collection[str]) -> Registry:
        """This registry less the tools `names` (a tool this machine can't offer, such as run_command without a
        sandbox)."""
        return Registry([s for s in self._specs.values() if s.name not in names], self._handlers,
                        optional_budget=self.optional_budget)

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def names(self) -> list[str]:
        return list(self._specs)

    def specs(self) -> list[ToolSpec]:
        return list(self._specs.values())

    def get(self, name: str) -> ToolSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise UsageError(f"unknown tool {name!r}; available tools: {', '.join(self._specs)}") from None

    def handler(self, name: str) -> Callable[..., Any]:
        self.get(name)
        try:
            return self._handlers[name]
        except KeyError:
            raise CliAgentError(f"tool {name!r} has no handler yet") from None

    def has_handler(self, name: str) -> bool:
        return name in self._handlers

    def categories(self) -> list[str]:
        return list(dict.fromkeys(spec.category for spec in self._specs.values()))

    def by_category(self, category: str) -> list[ToolSpec]:
        return [spec for spec in self._specs.values() if spec.category == category]

    def model_tools(
        self, task_text: str = "", workflow: str | None = None, only: Collection[str] | None = None
    ) -> list[ToolSpec]:
        """The tools to offer the model, in category order: exposed ones with a handler; optional ones only when
        hinted by the task or workflow (or named in `only`); restricted to `only` when given."""
        if only is not None:
            for name in only:
                self.get(name)  # an unknown name is an error, with the list of tools
        text = f"{task_text}\n{re.sub(r'[_-]+', ' ', workflow or '')}"
        chosen = []
        for spec in self._specs.values():
            if not spec.exposed_to_model or spec.name not in self._handlers:
                continue
            if only is not None and spec.name not in only:
                continue
            if spec.optional and only is None and not self.is_hinted(spec.name, text):
                continue
            chosen.append(spec)
        if self.optional_budget is not None and only is None:
            chosen = _within_budget(chosen, self.optional_budget)
        return chosen

    def is_hinted(self, name: str, text: str) -> bool:
        pattern = self._hints[self.get(name).name]
        return pattern is not None and pattern.search(text) is not None


def _within_budget(specs: list[ToolSpec], budget: int) -> list[ToolSpec]:
    kept, used = [], 0
    for spec in specs:
        if spec.optional:
            size = len(spec.description) + len(json.dumps(spec.parameters))
            if used + size > budget:
                continue
            used += size
        kept.append(spec)
    return kept


def _hint_pattern(hints: Iterable[str]) -> re.Pattern[str] | None:
    hints = list(hints)
    if not hints:
        return None
    return re.compile("|".join(rf"\b(?:{hint})\b" for hint in hints), re.IGNORECASE)


def _fingerprint(specs: Iterable[ToolSpec], handlers: Mapping[str, Any]) -> str:
    payload = {
        "specs": [dataclasses.asdict(spec) for spec in specs],
        "handlers": sorted(handlers),
    }
    canonical = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def load_remembered(directory: Any, handlers: Mapping[str, Callable[..., Any]], cache_dir: Path) -> list[ToolSpec]:
    """`load_specs` of one folder, remembering that its checks passed: a marker file named for `content_key` (the
    spec files and the checker) in `cache_dir` skips the checks of fields and schemas at the next start. TOML,
    names and handlers are checked every time; a changed file changes the key, so it is checked in full and a broken one
    still fails with its SpecError. An unwritable cache only means checking in full each time."""
    try:
        marker: Path | None = cache_dir / content_key(directory)
    except (OSError, SpecError):  # unreadable: load_specs says what is wrong
        marker = None
    checked = marker is not None and marker.exists()
    specs = load_specs([directory], handlers, content_checked=checked)
    if marker is not None and not checked:
        with contextlib.suppress(OSError):
            marker.parent.mkdir(parents=True, exist_ok=True)
            marker.touch()
    return specs


@functools.cache
def _builtin() -> Registry:
    table = handlers()
    return Registry(load_remembered(builtin_spec_dir(), table, paths.user_cache_dir() / "checked-specs"), table)

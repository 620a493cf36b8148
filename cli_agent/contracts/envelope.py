"""The result of every tool call, `{ok, data, warnings, errors}`, and the exception tools raise to produce a failed one.

A tool never lets an exception escape: it returns data (the dispatcher wraps it) or raises `ToolError`, whose
message and `hints` (nearest existing paths, the files in the folder, the valid range...) tell the model how to
recover.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import field
from typing import Any

from cli_agent.contracts.images import ImagePart
from cli_agent.contracts.records import dataclass

__all__ = ["Envelope", "Later", "ToolError"]


class Later:
    """A hint of a ToolError worked out only when the hints are read (a folder's listing costs a walk, and many
    errors are caught and dropped without being shown: a path that only might name a file, say)."""

    __slots__ = ("make",)

    def __init__(self, make: Callable[[], Any]) -> None:
        self.make = make


class ToolError(Exception):
    """A tool failed in a way the model can act on. `hints` goes into the envelope's `data`."""

    def __init__(self, message: str, **hints: Any) -> None:
        super().__init__(message)
        self.message = message
        self._hints = hints

    @property
    def hints(self) -> dict[str, Any]:
        if any(isinstance(value, Later) for value in self._hints.values()):
            self._hints = {key: value.make() if isinstance(value, Later) else value
                           for key, value in self._hints.items()}
        return self._hints


@dataclass(frozen=True)
class Envelope:
    ok: bool
    data: Any = None
    warnings: tuple[str, ...] = field(default_factory=tuple)
    errors: tuple[str, ...] = field(default_factory=tuple)
    # Images the model is shown after the turn's results (read_file on a PNG): never in the JSON, the trace or `data`
    images: tuple[ImagePart, ...] = field(default=(), compare=False)

    @classmethod
    def success(cls, data: Any = None, warnings: list[str] | tuple[str, ...] = (),
                images: tuple[ImagePart, ...] = ()) -> Envelope:
        return cls(ok=True, data=data, warnings=tuple(warnings), images=images)

    @classmethod
    def failure(cls, *errors: str, data: Any = None, warnings: list[str] | tuple[str, ...] = ()) -> Envelope:
        return cls(ok=False, data=data, warnings=tuple(warnings), errors=tuple(errors))

    def to_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "data": self.data, "warnings": list(self.warnings), "errors": list(self.errors)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Envelope:
        return cls(ok=bool(data["ok"]), data=data.get("data"), warnings=tuple(data.get("warnings") or ()),
                   errors=tuple(data.get("errors") or ()))

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)

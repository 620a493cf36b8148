"""The interactive REPL (issue 5 builds it out)."""

from __future__ import annotations

from typing import Any

from cli_agent import errors

__all__ = ["run_repl"]


def run_repl(loaded: Any, *, provider_factory: Any) -> int:
    raise errors.UsageError("the REPL is not available yet: pass -p TEXT to run one task")

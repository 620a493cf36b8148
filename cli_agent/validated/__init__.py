"""Validated files: the values that files describe (settings, tool specs, facts, workflows, MCP settings, eval
suites) as plain frozen dataclasses checked on first use (`checked`), read by the one TOML reader (`reader`), with
one wording for what is wrong and where (`wording`: `FILE:LINE: KEY: PROBLEM`, see docs/file-errors.md).

May import: contracts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.validated import checked
    from cli_agent.validated.checked import Secret, check, field_names, field_type, plainly_valid, rule, unchecked
    from cli_agent.validated.reader import TomlFile, load_checked, parse_toml, read_toml
    from cli_agent.validated.wording import Loc, Problem, problem_of

__all__ = [
    "Loc",
    "Problem",
    "Secret",
    "TomlFile",
    "check",
    "checked",
    "field_names",
    "field_type",
    "load_checked",
    "parse_toml",
    "plainly_valid",
    "problem_of",
    "read_toml",
    "rule",
    "unchecked",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("Secret", "check", "field_names", "field_type", "plainly_valid", "rule", "unchecked"):
        from cli_agent.validated import checked

        return getattr(checked, name)
    if name in ("TomlFile", "load_checked", "parse_toml", "read_toml"):
        from cli_agent.validated import reader

        return getattr(reader, name)
    if name in ("Loc", "Problem", "problem_of"):
        from cli_agent.validated import wording

        return getattr(wording, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""Validated files: the values that files describe (settings, tool specs, facts, workflows, MCP settings, eval
suites) as plain frozen dataclasses checked on first use (`checked`), read by the one TOML reader (`reader`), with
one wording for what is wrong and where (`wording`: `FILE:LINE: KEY: PROBLEM`, see docs/file-errors.md).

May import: contracts.
"""

from cli_agent.validated import checked
from cli_agent.validated.checked import *
from cli_agent.validated.reader import *
from cli_agent.validated.wording import *

__all__ = [
    "Loc", "Problem", "Secret", "TomlFile", "check", "checked", "field_names", "field_type", "load_checked",
    "parse_toml", "plainly_valid", "problem_of", "read_toml", "rule", "unchecked",
]

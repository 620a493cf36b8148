"""Validated files: the values that files describe (settings, tool specs, facts, workflows, MCP settings, eval
suites) as plain frozen dataclasses checked on first use (`checked`), read by the one TOML reader (`reader`), with
one wording for what is wrong and where (`wording`: `FILE:LINE: KEY: PROBLEM`, see docs/file-errors.md).

May import: contracts.
"""

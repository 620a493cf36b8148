"""Validated files: the values that files describe (settings, tool specs, facts, workflows, MCP settings, eval
suites) as plain frozen dataclasses checked on first use (`checked`), and reading their TOML (`reader`), with one
wording for what is wrong and where.

May import: contracts.
"""

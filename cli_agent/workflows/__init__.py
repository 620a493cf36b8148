"""Workflows: named tasks the user invokes (`/explain src/app.py`), defined in TOML files (`files`: the built-in
ones in `cli_agent/builtin_workflows/`, the user's and the project's), and run as steps in one session (`run`).

May import: session and everything below it.
"""

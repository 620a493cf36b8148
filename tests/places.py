"""Where the tests find the repository and their data, the same from every test folder."""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
GOLDEN = TESTS / "golden"  # the golden system prompts
MCP_SERVERS = TESTS / "mcp_servers"  # the MCP servers the tests start
CORPORA = REPO.parent / "shared" / "corpora"  # shared test data, cloned beside the repository (CI)

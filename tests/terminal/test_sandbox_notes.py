"""The environment variables the command sandbox drops, in a pseudo-terminal: never at the session's start, said with
the command that failed for want of one."""

from __future__ import annotations

import sys

import pytest
from termkit import PROMPT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")

WANTS = 'test -n "$DATABASE_URL" || { echo "DATABASE_URL is not set" >&2; exit 1; }'


@pytest.mark.slow
def test_the_dropped_variables_are_said_only_where_a_command_wants_one(repl, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgres://LEAK@db/x")
    monkeypatch.setenv("GITHUB_PAT", "LEAK-ghp")
    r = repl([{"tool_calls": [{"name": "run_command", "arguments": {"command": WANTS}}]}, {"text": "it needs one"}],
             "--yes")
    opening = r.child.before or ""
    assert "not passed to commands" not in opening and "GITHUB_PAT" not in opening  # the banner says nothing
    r.say("run the migration")
    out = r.expect("it needs one")
    assert "DATABASE_URL is not passed to commands" in " ".join(out.split()), out
    assert "LEAK" not in out and "GITHUB_PAT" not in out
    r.expect(PROMPT)
    assert r.quit() == 0

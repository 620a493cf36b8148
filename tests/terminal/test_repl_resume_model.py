"""`cli-agent -c` with no model on the command line goes on with the session's model and server (never its key),
and says which, in a pseudo-terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow


def test_continue_without_a_model_uses_the_sessions_model_and_server_but_not_its_key(tmp_path):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"text": "the word was kiwi"}]))
    (tmp_path / "ws").mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_") and k != "CI"}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home")}
    first = subprocess.run([sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}", "--api-base",
                            "http://127.0.0.1:9/v1", "--api-key", "sk-never-stored", "-C", str(tmp_path / "ws"),
                            "-p", "remember kiwi"], env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=120)
    assert first.returncode == 0, first.stderr
    t = Term(tmp_path, None, args=("-c",), cols=100, wait=None)
    said = " ".join(t.expect(PROMPT).split())
    assert f"continuing with the session's model scripted:{script} at http://127.0.0.1:9/v1" in said
    t.say("what was the word?")
    t.expect("the word was kiwi")  # the session's (scripted) model answers
    t.expect(PROMPT)
    assert t.quit() == 0
    traces = list((tmp_path / "home" / "state" / "traces").glob("*.jsonl"))
    headers = [json.loads(p.read_text().splitlines()[0]) for p in traces]
    assert headers and all(h["api_base"] == "http://127.0.0.1:9/v1" for h in headers)
    assert not any("sk-never-stored" in p.read_text() for p in traces)

"""A trace with a reasoning model's thinking replays exactly, its thinking played back with each reply."""

from __future__ import annotations

import pytest

from cli_agent.cli.main import run
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.replay.provider import outcomes

pytestmark = pytest.mark.usefixtures("isolated_home")


def test_thinking_is_replayed_with_its_reply(tmp_path, capsys):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("alpha\n")
    trace = tmp_path / "trace.jsonl"
    provider = ScriptedProvider([{"thinking": "read it first", "tool_calls": [{"name": "read_file",
                                                                                "arguments": {"path": "a.txt"}}]},
                                 {"thinking": "it says alpha", "text": "It says alpha."}])
    code = run(["-C", str(ws), "-p", "what does a.txt say", "--model", "scripted", "--trace", str(trace)],
               provider_factory=lambda settings: provider)
    assert code == 0
    played = outcomes(read_trace(trace))
    assert [item["thinking"] for item in played if isinstance(item, dict)] == ["read it first", "it says alpha"]
    capsys.readouterr()
    assert run(["replay", str(trace)]) == 0
    assert "replay identical: 1 run(s)" in capsys.readouterr().out

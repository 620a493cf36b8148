"""`/ps` in the REPL, in a pseudo-terminal: the background process the model started is listed with its command and
last line of output, `/ps stop N` ends it, its pending changes are shown and not applied, and quitting leaves no
process behind."""

from __future__ import annotations

import sys
import uuid

import pytest
from sandboxkit import processes_matching
from termkit import PROMPT

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")


@pytest.mark.slow
def test_ps_lists_stops_and_shows_pending_changes(repl) -> None:
    mark = uuid.uuid4().hex[:8]
    start = {"name": "run_command",
             "arguments": {"command": f"echo made > made.txt; echo ready-{mark}; sleep 300 # {mark}",
                           "background": True}}
    r = repl([{"tool_calls": [start]}, {"text": "it runs"}, {"text": "noted"}])
    r.say("start it")
    r.expect("it runs")
    r.expect(PROMPT)
    r.say("/ps")
    r.expect(f"ready-{mark}")  # its last line of output, under its row
    r.expect(PROMPT)
    r.say("/ps stop 1")
    r.expect("stopped process 1")
    r.expect(r"pending|wait for your approval")
    r.expect(PROMPT)
    r.say("/ps")
    r.expect(r"exited")
    r.expect(r"pending changes: 1 created")
    r.expect(PROMPT)
    assert processes_matching(f"# {mark}") == []
    assert not (r.ws / "made.txt").exists()  # nothing lands unasked
    r.say("/ps stop 7")
    r.expect("no background process 7")
    r.expect(PROMPT)
    assert r.quit() == 0


@pytest.mark.slow
def test_clear_and_quitting_stop_what_runs_in_the_background(repl) -> None:
    marks = [uuid.uuid4().hex[:8] for _ in range(2)]
    starts = [{"name": "run_command", "arguments": {"command": f"sleep 300 # {m}", "background": True}} for m in marks]
    r = repl([{"tool_calls": [starts[0]]}, {"text": "it runs"}, {"tool_calls": [starts[1]]}, {"text": "again"}])
    r.say("start it")
    r.expect("it runs")
    r.expect(PROMPT)
    assert processes_matching(f"# {marks[0]}")
    r.say("/clear")
    r.expect("started a new session")
    r.expect(PROMPT)
    assert processes_matching(f"# {marks[0]}") == []
    r.say("start another")
    r.expect("again")
    r.expect(PROMPT)
    assert processes_matching(f"# {marks[1]}")
    assert r.quit() == 0
    assert processes_matching(f"# {marks[1]}") == []

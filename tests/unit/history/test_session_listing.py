"""A run that never got an answer is not a session (nothing to list or continue); a session whose last run failed
is marked; `cli-agent sessions` has a header row and fits the terminal's width."""

from __future__ import annotations

import re
import sqlite3
import sys

import pytest

from cli_agent.cli.main import run
from cli_agent.history.session_index import SessionIndex
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.py").write_text("x = 1\n")
    return root


def one_shot(ws, prompt: str, *replies) -> int:
    provider = ScriptedProvider(list(replies))
    return run(["-C", str(ws), "-p", prompt, "--model", "scripted"], provider_factory=lambda s: provider)


def test_a_run_that_never_got_an_answer_leaves_no_session(ws, capsys):
    assert one_shot(ws, "hello", {"error": "missing_key"}) == 2
    assert one_shot(ws, "again", {"error": "fatal", "message": "connection refused"}) == 1
    capsys.readouterr()
    assert run(["sessions", "-C", str(ws)]) == 0
    assert "no sessions in" in capsys.readouterr().out
    assert run(["-C", str(ws), "-c", "-p", "go on", "--model", "scripted"],
               provider_factory=lambda s: ScriptedProvider([])) == 2
    assert "no earlier session" in capsys.readouterr().err
    with sqlite3.connect(SessionIndex().path) as db:
        assert db.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 0  # not even a hidden row


def test_a_session_whose_last_run_failed_is_marked_and_the_header_names_the_columns(ws, capsys):
    assert one_shot(ws, "fine task", {"text": "done"}) == 0
    assert one_shot(ws, "broken task", {"tool_calls": [{"name": "read_file", "arguments": {"path": "a.py"}}]},
                    {"error": "fatal", "message": "the server went away"}) == 1
    capsys.readouterr()
    assert run(["sessions", "-C", str(ws)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert re.match(r"ID +LAST USED +MODEL +TURNS +FIRST MESSAGE$", lines[0])
    assert re.search(r"scripted +1 +\[failed\] broken task$", lines[1])
    assert re.search(r"scripted +1 +fine task$", lines[2])
    assert run(["sessions", "-C", str(ws), "--json"]) == 0
    import json

    listed = json.loads(capsys.readouterr().out)
    assert [(e["first_message"], e["failed"], e["status"], e["turns"]) for e in listed] == [
        ("broken task", True, "error", 1), ("fine task", False, "done", 1)]


@pytest.mark.slow
@pytest.mark.parametrize("cols", [60, 80])
def test_in_a_terminal_the_listing_is_cut_to_the_width(ws, isolated_home, cols):
    pexpect = pytest.importorskip("pexpect")
    assert one_shot(ws, "a first message long enough to need cutting at sixty or eighty columns, surely",
                    {"text": "done"}) == 0
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", "sessions", "-C", str(ws)], dimensions=(20, cols),
                          encoding="utf-8", env={"CLI_AGENT_HOME": str(isolated_home), "TERM": "xterm",
                                                 "PYTHONPATH": ":".join(sys.path)}, timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    lines = [line for line in child.before.replace("\r", "").splitlines() if line]
    narrow = cols < 80  # the first message on a line of its own, the footer's commands on two
    assert child.exitstatus == 0 and lines[0].startswith("ID ") and len(lines) == (5 if narrow else 3)
    message = lines[2 if narrow else 1]
    assert all(len(line) <= cols for line in lines) and message.endswith("…") and "a first message" in message

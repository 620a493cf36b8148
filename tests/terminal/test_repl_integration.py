"""The REPL's integrations, driven in a pseudo-terminal with the scripted model: workflows as `/NAME ARGS` (with
their questions and Ctrl-C), `/help NAME`, `/facts` deciding on proposals, and continuing sessions (`-c`, `/resume`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from screenkit import Terms
from termkit import CONTROL, PROMPT, TIMEOUT, Repl, repl_env

from cli_agent.facts.store import FactStore

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow  # a real REPL in a pty: seconds a test


def one_shot(tmp_path: Path, task: str, answer: str, name: str) -> None:
    """A finished `cli-agent -p TASK` in the same workspace and home as the REPL tests start."""
    (tmp_path / "ws").mkdir(exist_ok=True)
    script = tmp_path / f"{name}.json"
    script.write_text(json.dumps([{"text": answer}]))
    done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}", "-C",
                           str(tmp_path / "ws"), "-p", task], env=repl_env(tmp_path / "home"), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=TIMEOUT)
    assert done.returncode == 0, done.stderr


def prompts(r: Repl) -> list[str]:
    return [rec["prompt"] for rec in r.records() if rec["type"] == "run_started"]


# -- workflows -------------------------------------------------------------------------------------------------------

def test_a_workflow_runs_with_positional_and_with_key_value_arguments(repl, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n")
    r = repl([{"text": "notes explained"}, {"text": "focused answer"}])
    r.say("/explain notes.txt")
    assert "workflow explain: path='notes.txt'" in r.expect("notes explained")
    r.expect(PROMPT)
    r.say('/explain question="why hello" path=notes.txt')
    r.expect("focused answer")
    r.expect(PROMPT)
    assert r.quit() == 0
    first, second = prompts(r)
    assert "Explain notes.txt to a developer" in first
    assert "Explain notes.txt to a developer" in second and "if given: why hello" in second


def test_a_missing_parameter_is_asked_for_checked_and_then_the_workflow_runs(repl, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n")
    r = repl([{"text": "notes explained"}])
    r.say("/explain")
    assert "path (path, required): The file or folder to explain" in r.expect("path:")
    r.say("nowhere.txt")
    r.expect("path: nowhere.txt does not exist in the workspace")  # the problem, then the same question again
    r.expect("path:")
    r.say("notes.txt")
    r.expect("notes explained")
    r.expect(PROMPT)
    assert r.quit() == 0
    (prompt,) = prompts(r)
    assert "Explain notes.txt" in prompt


def test_a_path_parameter_asked_for_completes_with_tab(repl, tmp_path):
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "notes.txt").write_text("hello\n")
    (tmp_path / "ws" / "other.txt").write_text("x\n")
    r = repl([{"text": "notes explained"}])
    r.say("/explain")
    r.expect("path:")
    r.child.send("no\t")  # the one workspace path starting with "no"
    r.expect("notes.txt")
    r.child.send("\r")
    r.expect("notes explained")
    r.expect(PROMPT)
    assert r.quit() == 0
    (prompt,) = prompts(r)
    assert "Explain notes.txt" in prompt


def test_ctrl_c_at_a_question_cancels_with_nothing_run(repl):
    r = repl([{"text": "must not be asked for"}])
    r.say("/explain")
    r.expect("path:")
    r.child.sendcontrol("c")
    r.expect("cancelled: explain did not run")
    r.expect(PROMPT)
    assert r.quit() == 0
    traces = r.home / "state" / "traces"
    assert not traces.exists() or not [rec for rec in r.records() if rec["type"] in ("run_started", "model_request")]


def test_help_shows_a_workflow(repl):
    r = repl([])
    r.say("/help explain")
    seen = r.expect("from built-in: builtin_workflows/explain.toml")
    assert "/explain PATH [QUESTION]" in seen and "path (path, required): The file or folder to explain" in seen
    assert "also: /wf:explain" in r.expect(PROMPT)
    assert r.quit() == 0


def test_a_workflow_named_like_a_command_is_wf_name_and_its_tool_step_is_one_undo_turn(repl, tmp_path):
    folder = tmp_path / "ws" / ".cli-agent" / "workflows"
    folder.mkdir(parents=True)
    (folder / "clear.toml").write_text('name = "clear"\ndescription = "Write a greeting."\n'
                                       '[[params]]\nname = "path"\ntype = "path"\nrequired = true\n'
                                       '[[steps]]\ntool = "create_file"\n'
                                       '[steps.arguments]\npath = "{{path}}"\ncontent = "hello\\n"\n')
    r = repl([])
    r.say("/wf:clear hi.txt")
    assert "the project workflow clear is /wf:clear here" in r.expect(r"Apply\?")  # said at the first line
    r.child.send("y")
    r.expect("created")
    r.expect(PROMPT)
    assert (r.ws / "hi.txt").read_text() == "hello\n"
    r.say("/undo")
    r.expect("undid turn")
    r.expect(PROMPT)
    assert not (r.ws / "hi.txt").exists()
    r.say("/clear")  # the built-in keeps its name
    r.expect("started a new session")
    r.expect(PROMPT)
    assert r.quit() == 0


# -- facts -----------------------------------------------------------------------------------------------------------

def test_facts_commits_a_pending_proposal_on_y(repl, tmp_path):
    (tmp_path / "ws").mkdir()
    store = FactStore(tmp_path / "ws")
    proposal = store.propose("Tests use pytest.", "pyproject lists it")
    r = repl([])
    r.say("/facts")
    assert "pyproject lists it" in r.expect(r"commit\? \[y/n")
    r.child.send("y")  # one key
    r.expect(f"committed {proposal.id}: Tests use pytest.")
    r.expect(PROMPT)
    assert r.quit() == 0
    assert [f.text for f in store.committed()] == ["Tests use pytest."] and store.pending() == []


# -- sessions --------------------------------------------------------------------------------------------------------

def test_continue_reopens_the_last_session_in_the_repl(repl, tmp_path):
    one_shot(tmp_path, "remember the word kiwi", "noted: kiwi", "first")
    r = repl([{"text": "the word was kiwi"}], "-c", name="second")
    banner = " ".join(CONTROL.sub("", r.child.before).split())  # it wraps where tmp_path's length makes it
    assert "resumed session" in banner and "remember the word kiwi" in banner
    r.say("what was the word?")
    r.expect("the word was kiwi")
    r.expect(PROMPT)
    assert r.quit() == 0
    (trace,) = [p for p in (r.home / "state" / "traces").glob("*.jsonl")
                if "what was the word?" in p.read_text()]
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    before, now = [rec["messages"] for rec in records if rec["type"] == "model_request"]  # the old run's, copied
    assert now == before + 2  # and the first task's answer and the new message: the conversation went on


def test_resume_is_a_picker_with_a_preview_and_a_damaged_session_cannot_be_chosen(tmp_path):
    one_shot(tmp_path, "remember the word kiwi", "noted: kiwi", "first")
    one_shot(tmp_path, "a session whose trace breaks", "ok", "broken")
    traces = sorted((tmp_path / "home" / "state" / "traces").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)
    traces[-1].write_text("not a trace\n")
    with Terms(tmp_path) as terms:  # a picker is redrawn cell by cell: what it shows is read on a screen
        r, screen = terms.start([{"text": "the word was kiwi"}], 160)
        r.say("/resume")
        listing = " ".join(screen.wait_for(r.child, "Esc leave").split())
        assert "Resume which session?" in listing
        assert re.search(r"1\. \S+ \S+ · scripted\S* · a session whose trace breaks \[cannot resume\]", listing)
        assert re.search(r"2\. \S+ \S+ · scripted\S* · remember the word kiwi", listing)
        assert "cannot resume: its trace is damaged" in " ".join(screen.wait_for(r.child, "damaged").split())
        r.child.send("\x1b[B")  # down: the preview follows
        screen.wait_for(r.child, "1 turn · files changed: none")
        r.child.send("\r")
        r.expect("resumed session")
        r.expect(PROMPT)
        r.say("what was the word?")
        r.expect("the word was kiwi")
        r.expect(PROMPT)
        assert r.quit() == 0

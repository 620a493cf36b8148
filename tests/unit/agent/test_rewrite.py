"""Whole-definition candidates: the model's plain-code rewrite of the task's definitions is put in place by name
and judged by the project's tests; with more candidates, the first attempt gives way at a third of the run's time."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from clikit import calc_project, cli, reaped

from cli_agent.agent.judge.rewrite import SAMPLES, planned_calls, reply_code
from cli_agent.agent.judge.rewrite_memory import TEST_FLOOR_S, TEST_TIMES, Pace
from cli_agent.agent.judge.verify import TestRun
from cli_agent.prompt.task_files import Place

PYTEST = f"{sys.executable} -m pytest -q -p no:cacheprovider"
READ = {"tool_calls": [{"name": "read_file", "arguments": {"path": "calc.py"}}]}
WRONG = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a * b"}}]}
RIGHT = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}
DONE = {"text": "Fixed add()."}
SOURCE = ("import re\n\n\ndef helper(x):\n    return x\n\n\nclass Box:\n    def get(self):\n        return 1\n\n"
          "    def put(self, x):\n        return x\n")


def test_the_code_is_the_first_fenced_block_that_parses() -> None:
    assert reply_code("Here:\n```python\ndef f(:\n```\nor\n```py\ndef f():\n    return 2\n```\nDone.") == \
        "def f():\n    return 2"
    assert reply_code("def f():\n    return 3\n") == "def f():\n    return 3"
    assert reply_code("I would change the condition.") is None
    assert reply_code("```python\ndef f():\n    return (\n") is None  # cut off: nothing to place


def test_a_reply_cut_short_keeps_the_definitions_it_finished() -> None:
    cut = "```python\nclass Box:\n    def is_empty(self):\n        return not self.get()\n\n    def put(self, x):\n  "
    assert reply_code(cut) == "class Box:\n    def is_empty(self):\n        return not self.get()"
    assert reply_code("```python\ndef f(x):\n    return (x +\n") is None  # nothing finished: nothing to place


def test_an_outline_copied_back_places_only_the_new_method() -> None:
    places = [Place("m.py", "Box", 8, 13, whole=False)]
    code = ("class Box:\n    def get(self):\n        return 2\n\n    def put(self, x): ...\n\n"
            "    def is_empty(self):\n        return not self.get()\n")
    calls = planned_calls(code, places, {"m.py": SOURCE})
    # `get` is a method of the outline, not shown whole; `put` a stub: only the new `is_empty` goes in
    assert [(c.name, "is_empty" in (c.arguments or {})["text"]) for c in calls] == [("insert_text", True)]


def test_a_long_class_is_named_by_init_and_the_methods_the_task_names() -> None:
    from cli_agent.agent.judge.rewrite import OUTLINE_METHODS, _request

    methods = "".join(f"    def m{i}(self):\n        return {i}\n\n" for i in range(30))
    source = (f"class Big:\n    def __init__(self):\n        pass\n\n{methods}"
              "    def is_major(self):\n        return 0\n")
    task = "Add a method is_stable(self): the major version at least 1"
    shown = _request(task, [Place("m.py", "Big", 1, 96, whole=False)], {"m.py": source})
    assert shown.count(" ...\n") == OUTLINE_METHODS and "def __init__(self): ..." in shown
    assert shown.endswith("Reply with the complete new `is_stable` only, in one ```python block; do not repeat the "
                          "code above.")
    assert "def is_major(self): ..." in shown and "def m0(self)" in shown and "def m29(self)" not in shown


def test_each_definition_goes_where_it_belongs() -> None:
    places = [Place("m.py", "helper", 4, 5, whole=True), Place("m.py", "Box", 8, 13, whole=False)]
    code = ("def helper(x):\n    return x + 1\n\n\ndef shout(x):\n    return x.upper()\n\n\n"
            "def is_empty(self):\n    return not self.get()\n\n\nCONSTANT = 1\n")
    calls = planned_calls(code, places, {"m.py": SOURCE})
    assert [(c.name, (c.arguments or {}).get("name")) for c in calls] == [
        ("insert_text", None), ("insert_text", None), ("replace_definition", "helper")]
    arguments = [c.arguments or {} for c in calls]
    assert arguments[0]["after_line"] == 13  # a new method: at the end of the class outlined, indented
    assert arguments[0]["text"] == "\n    def is_empty(self):\n        return not self.get()"
    assert arguments[1] == {"path": "m.py", "text": "\n\ndef shout(x):\n    return x.upper()",
                            "after_line": 5}  # a new function: after the last module-level one shown


def test_a_method_with_no_class_outlined_is_not_placed_and_a_new_class_is() -> None:
    places = [Place("m.py", "helper", 4, 5, whole=True)]
    calls = planned_calls("def size(self):\n    return 0\n\n\nclass Other:\n    pass\n", places, {"m.py": SOURCE})
    assert [(c.arguments or {})["text"] for c in calls] == ["\n\nclass Other:\n    pass"]


def test_a_new_method_goes_into_the_class_not_over_a_module_function_of_the_same_name() -> None:
    deprecated = "def size(box):\n    return len(box)\n"
    places = [Place("m.py", "Box", 8, 13, whole=False), Place("old.py", "size", 1, 2, whole=True)]
    calls = planned_calls("def size(self):\n    return 0\n", places, {"m.py": SOURCE, "old.py": deprecated})
    assert [(c.name, (c.arguments or {})["path"]) for c in calls] == [("insert_text", "m.py")]
    assert (calls[0].arguments or {})["text"] == "\n    def size(self):\n        return 0"
    # a function of the module still replaces it
    calls = planned_calls("def size(box):\n    return 0\n", places, {"m.py": SOURCE, "old.py": deprecated})
    assert [(c.name, (c.arguments or {})["path"]) for c in calls] == [("replace_definition", "old.py")]


@pytest.fixture
def calc(tmp_path: Path) -> tuple[Path, Path]:
    return calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\nverify_rounds = 0\n")


REWRITE = {"text": "The subtraction should be an addition:\n```python\ndef add(a, b):\n    return a + b\n```\n"}


def run(tmp_path: Path, ws: Path, home: Path, replies: list[object], *extra: str,
        task: str = "add(2, 3) in calc.py returns -1, it should be 5") -> tuple[int, dict, str]:
    script, trace = tmp_path / "script.json", tmp_path / "trace.jsonl"
    script.write_text(json.dumps(replies))
    done = cli(["-p", task, "--model", f"scripted:{script}", "-C",
                str(ws), "--yes", "--output", "json", "--trace", str(trace), *extra], home=home, timeout=180)
    assert done.stdout.strip(), done.stderr
    return done.returncode, json.loads(done.stdout), trace.read_text()


@pytest.mark.slow
def test_the_second_candidate_rewrites_the_function_and_passes(tmp_path: Path, calc) -> None:
    ws, home = calc
    code, report, trace = run(tmp_path, ws, home, [READ, WRONG, DONE, REWRITE], "--attempts", "2")
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    # the first attempt's change fails; the candidate checks the code as it was (what fails is shown with it,
    # `_request`), then its rewrite passes
    phases = [json.loads(line)["phase"] for line in trace.splitlines() if '"verification"' in line]
    assert phases == ["running", "failed", "running", "failed", "running", "passed"]


@pytest.mark.slow
def test_the_candidates_requests_and_tokens_count_in_the_run_s_report(tmp_path: Path, calc) -> None:
    ws, home = calc
    used = {"prompt_tokens": 100, "completion_tokens": 10}
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    replies: list[object] = [dict(reply, usage=used) for reply in (READ, WRONG, DONE, wrong, REWRITE)]
    code, report, _ = run(tmp_path, ws, home, replies, "--attempts", "2")
    assert code == 0 and report["attempt"] == 2, report
    # 3 requests of the first attempt, 2 of candidate 2: before, the report counted the first attempt's only
    assert report["steps"] == 5 and report["usage"]["prompt_tokens"] == 500, report
    assert report["usage"]["completion_tokens"] == 50, report


@pytest.mark.slow
def test_a_failing_rewrite_is_undone_and_the_next_sample_tried(tmp_path: Path, calc) -> None:
    ws, home = calc
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    code, report, _ = run(tmp_path, ws, home, [READ, WRONG, DONE, wrong, {"text": "Use +."}, REWRITE],
                          "--attempts", "2")
    assert code == 0 and report["attempt"] == 2, report  # the third sample passes, on the original file
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


@pytest.mark.slow
def test_no_rewrite_passing_keeps_the_first_attempts_change(tmp_path: Path, calc) -> None:
    ws, home = calc
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    slow = dict(wrong, delay=1.0)
    code, report, trace = run(tmp_path, ws, home, [READ, WRONG, DONE, slow, *[wrong] * (SAMPLES - 1)],
                              "--attempts", "2")
    assert code == 8 and report["verified"] is False and "nor did 1 more candidate" in report["message"]
    assert f"rewrite {SAMPLES} repeats rewrite 1" in " ".join(report["warnings"]), report  # tested once
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"  # the first attempt's change
    # the run ended after its candidates, not when its first attempt did: the trace's end says when
    times = {e["type"]: e["time"] for e in map(json.loads, trace.splitlines()) if "time" in e}
    assert times["run_finished"] - times["run_started"] >= 1.0


@pytest.mark.slow
@pytest.mark.parametrize(("signum", "code", "reason"), [(signal.SIGINT, 130, "interrupted"),
                                                        (signal.SIGTERM, 143, "terminated")])
def test_a_signal_during_a_candidate_ends_the_run_and_samples_no_more(tmp_path: Path, calc, signum: int, code: int,
                                                                     reason: str) -> None:
    ws, home = calc
    script, trace = tmp_path / "script.json", tmp_path / "trace.jsonl"
    script.write_text(json.dumps([READ, WRONG, DONE, dict(REWRITE, delay=60), REWRITE, REWRITE]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"CLI_AGENT_HOME": str(home),
                                                                                     "CI": "true"}
    with reaped(subprocess.Popen([sys.executable, "-m", "cli_agent", "-p", "add(2, 3) in calc.py returns -1, it "
                                  "should be 5", "--model", f"scripted:{script}", "-C", str(ws), "--yes", "--trace",
                                  str(trace), "--attempts", "3"], env=env, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True)) as proc:
        deadline = time.monotonic() + 60
        while '"candidate": 2' not in (trace.read_text() if trace.exists() else ""):
            assert time.monotonic() < deadline and proc.poll() is None, "candidate 2 never asked"
            time.sleep(0.05)
        time.sleep(0.3)  # waiting for its slow reply
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=60)
    assert proc.returncode == code, err
    assert "candidate 3" not in err and "candidate 3" not in trace.read_text()  # no more candidates sampled
    assert json.loads(trace.read_text().splitlines()[-1])["stop_reason"] == reason
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a * b\n"  # the first attempt's change stays


@pytest.mark.slow
@pytest.mark.parametrize(("replies", "asked", "said"), [
    # its first step ends past a third of the 30 s: cut at the share, 10 s; the candidate has the other 20 s to run
    # the project's tests, ample on a loaded machine (with 10 s left it took 4.5 s once, and failed under load)
    ([dict(READ, delay=10.5), REWRITE], [0, 2], "the first attempt used its share of the time (1 model requests)"),
    # a reply due at 28 s (a small model running on to its longest reply) left the candidates 2 s; it is cut at 10 s
    ([dict(READ, delay=28), REWRITE], [0, 2], "the first attempt used its share of the time (1 model requests)"),
    # the provider says the first request would wait 12 s for its first token (the bundled model reading a long
    # prompt), past the 10 s share: the run sends nothing, and the one reply is read by the rewrite's request
    ([dict(REWRITE, first_token_s=12)], [2],
     "the next would wait about 12 s for its first token, and 10 s of its share were left"),
], ids=["share-spent", "request-cut", "wait-told"])
def test_the_first_attempt_gives_way_at_a_third_of_the_time(tmp_path: Path, calc, replies: list[object],
                                                            asked: list[int], said: str) -> None:
    ws, home = calc
    code, report, trace = run(tmp_path, ws, home, replies, "--attempts", "2", "--timeout", "30")
    assert code == 0 and report["attempt"] == 2, report
    events = [json.loads(line) for line in trace.splitlines()]
    assert [e.get("candidate") or 0 for e in events if e["type"] == "model_request"] == asked
    assert said in trace
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


@pytest.mark.slow
def test_a_request_told_to_fit_its_share_is_sent(tmp_path: Path, calc) -> None:
    ws, home = calc
    code, report, trace = run(tmp_path, ws, home, [dict(RIGHT, first_token_s=1), DONE], "--attempts", "2",
                              "--timeout", "30")
    assert code == 0 and report["verified"] is True and report.get("attempt", 0) == 0, report
    assert '"candidate": 2' not in trace and "gave way" not in trace


@pytest.mark.slow
def test_a_first_attempt_that_gives_way_with_a_right_change_ends_done_without_candidates(tmp_path: Path, calc) -> None:
    ws, home = calc
    # its right edit lands, and its next reply would come past a third of the 30 s: that request is cut at the
    # share, and the change is checked before any candidate is asked for
    code, report, trace = run(tmp_path, ws, home, [RIGHT, dict(DONE, delay=28)], "--attempts", "3", "--timeout",
                              "30")
    assert code == 0 and report["verified"] is True and report.get("attempt", 0) in (0, 1), report
    assert "its change passes the tests" in report["message"] and '"candidate": 2' not in trace
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


DOCUMENTED = ('class Box:\n    def get(self):\n        """Give the one.\n\n        >>> Box().get()\n        1\n'
              '        """\n        return 1\n')


def test_the_model_sees_no_docstring_and_a_new_version_without_one_keeps_the_original() -> None:
    from cli_agent.agent.judge.rewrite import _request

    place = Place("m.py", "get", 2, 8, whole=True)
    shown = _request("get() should give 2", [place], {"m.py": DOCUMENTED})
    assert "def get(self):\n    return 1\n```" in shown and "Give the one" not in shown
    assert "What fails" not in shown
    failing = "E   assert 1 == 2\n" + "x" * 3000
    with_failures = _request("get() should give 2", [place], {"m.py": DOCUMENTED}, failing)
    assert "What fails with this code now:\n```\nE   assert 1 == 2\n" in with_failures
    assert with_failures.endswith("x" * (1500 - 18) + "\n```")  # its first 1,500 characters
    # wrapped in its class by the model, and without the docstring: placed by name, the docstring put back
    calls = planned_calls("class Box:\n    def get(self):\n        return 2\n", [place], {"m.py": DOCUMENTED})
    assert [(c.name, (c.arguments or {})["new"]) for c in calls] == [
        ("replace_definition", 'def get(self):\n    """Give the one.\n\n    >>> Box().get()\n    1\n    """\n'
                               '    return 2')]


def test_a_class_shown_as_an_outline_stands_for_the_methods_the_reply_gives_it() -> None:
    places = [Place("m.py", "Box", 8, 13, whole=False)]
    calls = planned_calls("class Box:\n    def is_empty(self) -> bool:\n        return not self.get()\n", places,
                          {"m.py": SOURCE})
    assert [(c.name, (c.arguments or {}).get("after_line")) for c in calls] == [("insert_text", 13)]


def test_a_rename_leaves_an_alias_and_insertions_go_first_from_the_bottom() -> None:
    places = [Place("m.py", "helper", 4, 5, whole=True), Place("m.py", "Box", 8, 13, whole=False)]
    code = ("def assist(x):\n    return x\n\n\nhelper = assist\n\n\n"
            "def is_empty(self):\n    return not self.get()\n")
    calls = planned_calls(code, places, {"m.py": SOURCE})
    assert [(c.name, (c.arguments or {}).get("after_line"), (c.arguments or {}).get("new")) for c in calls] == [
        ("insert_text", 13, None), ("insert_text", 5, None), ("replace_definition", None, "helper = assist")]


@pytest.mark.slow
def test_with_task_files_off_the_candidates_run_the_agent_loop(tmp_path: Path, calc) -> None:
    ws, home = calc
    fix = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}
    config = home / "config" / "config.toml"
    config.write_text(config.read_text() + "task_files = false\n")
    code, report, _ = run(tmp_path, ws, home, [READ, WRONG, DONE, READ, fix, DONE], "--attempts", "2")
    assert code == 0 and report["attempt"] == 2, report


@pytest.mark.slow
def test_each_candidate_s_requests_and_replies_are_in_the_trace_tagged_with_it(tmp_path: Path, calc) -> None:
    ws, home = calc
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    code, _, trace = run(tmp_path, ws, home, [READ, WRONG, DONE, wrong, REWRITE], "--attempts", "2")
    assert code == 0
    events = [json.loads(line) for line in trace.splitlines()]
    requests = [(e["step"], e.get("candidate", 0)) for e in events if e.get("type") == "model_request"]
    replies = [(e["text"], e.get("candidate", 0)) for e in events if e.get("type") == "assistant_message"]
    assert requests == [(1, 0), (2, 0), (3, 0), (1, 2), (2, 2)]  # the run's three, then candidate 2's two rewrites
    assert replies[3:] == [(wrong["text"], 2), (REWRITE["text"], 2)]


@pytest.mark.slow
def test_stream_json_shows_each_candidate_and_replay_plays_its_replies_back(tmp_path: Path, calc) -> None:
    ws, home = calc
    wrong = {"text": "I would swap the operands."}  # no code: each rewrite is asked for and answered, none tested
    script, trace = tmp_path / "script.json", tmp_path / "trace.jsonl"
    # candidate 2 made no change: candidate 3 (the loop) is sampled in its place, and answers without one too
    script.write_text(json.dumps([READ, WRONG, DONE, *[wrong] * SAMPLES, {"text": "add() looks right."}]))
    done = cli(["-p", "add(2, 3) in calc.py returns -1, it should be 5", "--model", f"scripted:{script}", "-C",
                str(ws), "--yes", "--output", "stream-json", "--trace", str(trace), "--attempts", "2"],
               home=home, timeout=300)
    assert done.returncode == 8, done.stdout[-2000:] + done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    tagged = [e for e in events if e.get("type") in ("model_request", "assistant_message") and e.get("candidate")]
    assert len([e for e in tagged if e["candidate"] == 2]) == 2 * SAMPLES and {e["candidate"] for e in tagged} == {2, 3}
    assert all(e["text"] == wrong["text"] for e in tagged if e["type"] == "assistant_message" and e["candidate"] == 2)
    # the first attempt's change is kept (no candidate passed): replay rewinds it and feeds every recorded reply
    # back in order, the candidate's rewrites included, and the run ends the same way
    replayed = cli(["replay", str(trace)], home=home, timeout=600)
    assert replayed.returncode == 0, replayed.stdout[-3000:] + replayed.stderr


@pytest.mark.slow
def test_a_rewrite_request_is_retried_like_the_loop_s(tmp_path: Path, calc) -> None:
    ws, home = calc
    config = home / "config" / "config.toml"
    config.write_text(config.read_text() + "retry_base_delay = 0.05\n")
    dropped = {"error": "retryable", "message": "HTTP 429"}
    code, report, trace = run(tmp_path, ws, home, [READ, WRONG, DONE, dropped, REWRITE], "--attempts", "2")
    assert code == 0 and report["attempt"] == 2, report  # the rewrite's request, refused once, went through
    retries = [json.loads(line) for line in trace.splitlines() if '"type": "retry"' in line]
    assert [r["reason"] for r in retries] == ["HTTP 429"]


@pytest.mark.slow
def test_a_rewrite_sees_its_predecessors_failure_and_an_identical_one_is_not_tested_again(tmp_path: Path,
                                                                                          calc) -> None:
    ws, home = calc
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    same = {"text": "Again:\n```python\ndef add(a, b):\n    # the same, laid out otherwise\n    return (b - a)\n```"}
    script, record, trace = tmp_path / "script.json", tmp_path / "requests.jsonl", tmp_path / "trace.jsonl"
    script.write_text(json.dumps({"replies": [READ, WRONG, DONE, wrong, same, REWRITE], "record": str(record)}))
    done = cli(["-p", "add(2, 3) in calc.py returns -1, it should be 5", "--model", f"scripted:{script}", "-C",
                str(ws), "--yes", "--output", "json", "--trace", str(trace), "--attempts", "2"], home=home, timeout=180)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["attempt"] == 2, report
    rewrites = [json.loads(line)[-1]["content"] for line in record.read_text().splitlines()][-3:]
    assert "earlier versions" not in rewrites[0]
    assert "Your earlier versions, newest first" in rewrites[1] and "return b - a" in rewrites[1]
    assert "What it did: " in rewrites[1], rewrites[1]
    verdicts = [(e["command"], e["phase"]) for e in map(json.loads, trace.read_text().splitlines())
                if e.get("type") == "verification" and e["phase"] != "running"]
    assert verdicts[-3:] == [(verdicts[-3][0], "failed"), ("rewrite 2", "repeat"), (verdicts[-1][0], "passed")]
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


@pytest.mark.slow
def test_a_rewrite_whose_tests_never_end_is_stopped_at_ten_times_their_time_and_the_next_tried(tmp_path: Path,
                                                                                             calc) -> None:
    ws, home = calc
    hangs = {"text": "```python\ndef add(a, b):\n    while True:\n        pass\n```"}
    code, report, trace = run(tmp_path, ws, home, [READ, WRONG, DONE, hangs, REWRITE], "--attempts", "2",
                              "--timeout", "45", task="add in calc.py subtracts its arguments; make it add them.")
    assert code == 0 and report["attempt"] == 2, report  # before the change, the loop took the rest of the run
    summaries = [e["summary"] for e in map(json.loads, trace.splitlines())
                 if e.get("type") == "verification" and e["phase"] == "failed"]
    assert summaries[-1].startswith("timed out after"), summaries
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_only_a_whole_test_command_run_to_its_end_sets_the_pace() -> None:
    whole, nearest = "pytest -q", "pytest -q tests/test_calc.py"
    for verdict in (TestRun(whole, False, "1 failed in 0.1s", ""),
                    TestRun(whole, True, "3 passed in 0.1s", "")):
        pace = Pace(whole)
        pace.took(2.0, verdict)
        assert pace.deadline(100.0, 1000.0) == 100.0 + max(TEST_FLOOR_S, TEST_TIMES * 2.0)
    # the task's examples failing first, only the nearest file run (the whole command may take far longer), the
    # tests that could not run, a run cut at its time: no pace, the run's own deadline
    for verdict in (TestRun("the task's examples", False, "add(2, 3) == 5: gave -1", "", examples=True),
                    TestRun(nearest, False, "1 failed in 0.1s", ""),
                    TestRun(whole, False, "could not run", "", broken=True),
                    TestRun(whole, False, "timed out after 9 s", "", timed_out=True)):
        pace = Pace(whole)
        pace.took(0.1, verdict)
        assert pace.deadline(100.0, 1000.0) == 1000.0, verdict
    pace = Pace(whole)
    pace.took(500.0, TestRun(whole, True, "3 passed", ""))
    assert pace.deadline(100.0, 1000.0) == 1000.0  # never past the run's deadline


def test_the_memory_shows_the_newest_wrong_versions_and_samples_further_after_a_repeat() -> None:
    from cli_agent.agent.judge.rewrite_memory import MAX_SHOWN, Memory

    memory = Memory()
    assert memory.shown() == "" and memory.sampling(0.7) == {"temperature": 0.7}
    for n in range(1, 6):
        memory.note(n, f"def f():\n    return {n}\n", f"gave {n}")
    assert memory.sampling(0.7) == {"temperature": 0.7, "top_p": 1.0}  # a version tried: the whole distribution
    shown = memory.shown()
    assert shown.count("```python") == MAX_SHOWN and shown.index("return 5") < shown.index("return 4")
    assert "return 1" not in shown and "What it did: gave 5" in shown
    assert memory.repeat_of("def f():  # again\n    return (5)") is not None and memory.repeat_of("def f(): 6") is None
    options = memory.sampling(0.7)
    assert options["temperature"] == pytest.approx(1.0) and options["seed"] > 0
    assert options["top_p"] == 1.0  # from the whole distribution: a sure token is not left alone before the temperature


WITH_ALL = 'import math\n\n__all__ = ["add"]\n\n\ndef add(a, b):\n    return a + b\n'


def _apply(source: str, calls: list) -> str:
    """The calls applied in their order, as the line tools would (each planned against the file as it was)."""
    lines = source.split("\n")
    for call in calls:
        a = call.arguments
        if call.name == "insert_text":
            lines[a["after_line"]:a["after_line"]] = a["text"].split("\n")
        elif call.name == "replace_lines":
            lines[a["start_line"] - 1:a["end_line"]] = a["new"].split("\n")
    return "\n".join(lines)


def test_a_rewrite_that_changes_all_replaces_the_modules_all() -> None:
    from cli_agent.agent.judge.module_names import shown_all
    from cli_agent.agent.judge.rewrite import _request

    places = [Place("calc.py", "add", 6, 7, whole=True)]
    shown = _request("Add mul(a, b) to calc.py and list it in __all__", places, {"calc.py": WITH_ALL},
                     names=shown_all({"calc.py": WITH_ALL}))
    assert 'The module\'s `__all__`' in shown and '# calc.py\n__all__ = ["add"]\n```' in shown
    code = 'def mul(a, b):\n    return a * b\n\n\n__all__ = ["add", "mul"]\n'
    calls = planned_calls(code, places, {"calc.py": WITH_ALL})
    assert [c.name for c in calls] == ["insert_text", "replace_lines"]  # the lower one first: the lines hold
    after = _apply(WITH_ALL, calls)
    assert '__all__ = ["add", "mul"]' in after and after.rstrip().endswith("def mul(a, b):\n    return a * b")
    assert after.count("__all__") == 1
    # the same assignment again, or a name the module does not assign, is no call
    assert planned_calls('__all__ = ["add"]\nNEW = 1\n', places, {"calc.py": WITH_ALL}) == []


def test_a_table_the_rewrite_was_not_shown_is_not_replaced_unless_the_task_names_it() -> None:
    from cli_agent.agent.judge.module_names import assignable

    source = 'UNCOUNTABLES = {"fish", "rice", "sheep"}\n\n\ndef pluralize(word):\n    return word + "s"\n'
    places = [Place("m.py", "pluralize", 4, 5, whole=True)]
    code = ('UNCOUNTABLES = {"fish"}\n\n\ndef pluralize(word):\n'
            '    return word if word in UNCOUNTABLES else word + "s"\n')
    task = "pluralize('sheep') returns 'sheeps': it should return 'sheep'. Fix pluralize in m.py."
    calls = planned_calls(code, places, {"m.py": source}, {}, assignable(task, public=False))
    assert [c.name for c in calls] == ["replace_definition"]  # the function only: the table was never shown
    named = assignable("Add 'sheep' to UNCOUNTABLES in m.py", public=False)
    assert [c.name for c in planned_calls(code, places, {"m.py": source}, {}, named)] == \
        ["replace_lines", "replace_definition"]
    assert "__all__" in assignable("Add mul(a, b) so that `from calc import mul` works", public=True)
    assert "__all__" not in assignable("Fix add in calc.py", public=False)


def test_a_rename_rewrite_replaces_the_old_definition_under_the_new_name() -> None:
    places = [Place("m.py", "helper", 4, 5, whole=True)]
    calls = planned_calls("def assist(x):\n    return x\n", places, {"m.py": SOURCE}, {"assist": "helper"})
    assert [(c.name, (c.arguments or {})["name"]) for c in calls] == [("replace_definition", "helper")]
    assert (calls[0].arguments or {})["new"].startswith("def assist(x):")
    # without the rename, the new name is a new function beside the old one
    assert [c.name for c in planned_calls("def assist(x):\n    return x\n", places, {"m.py": SOURCE})] == \
        ["insert_text"]


def test_a_rename_that_lands_renames_the_module_s_other_uses_of_the_old_name() -> None:
    source = ('__all__ = ["helper", "twice"]\n\n\ndef helper(x):\n    return x\n\n\n'
              'def twice(x):\n    """helper(x) twice"""\n    return helper(helper(x)) + obj.helper  # helper\n')
    places = [Place("m.py", "helper", 4, 5, whole=True)]
    calls = planned_calls("def assist(x):\n    return x\n", places, {"m.py": source}, {"assist": "helper"})
    assert [c.name for c in calls] == ["replace_lines", "replace_lines", "replace_definition"]
    # the call sites, not the docstring, the comment or another object's attribute; __all__ follows too
    assert (calls[0].arguments or {})["new"] == "    return assist(assist(x)) + obj.helper  # helper"
    assert (calls[1].arguments or {})["new"] == '__all__ = ["assist", "twice"]'


def test_a_new_function_the_package_must_export_is_imported_in_its_init_too() -> None:
    from cli_agent.agent.judge.module_names import reexports

    places = [Place("src/pkg/mod.py", "a", 1, 2, whole=True)]
    task = "Add b() to src/pkg/mod.py and export it: `from pkg import b` works."
    for init, after in [("from .mod import (\n    a,\n)\n", "from .mod import (\n    a,\n    b,\n)"),
                        ("from pkg.mod import a  # the API\n", "from pkg.mod import a, b  # the API"),
                        ("from .mod import (a)\n", "from .mod import (a, b)")]:
        sources = {"src/pkg/mod.py": "def a():\n    return 1\n", "src/pkg/__init__.py": init}
        calls = planned_calls("def b():\n    return 2\n", places, sources)
        assert [(c.name, (c.arguments or {})["path"]) for c in calls] == [("insert_text", "src/pkg/mod.py")]
        added = reexports(calls, sources, task)
        assert [(c.arguments or {})["new"] for c in added] == [after]
        assert reexports(calls, sources, "Add b() to src/pkg/mod.py.") == []  # no import stated: not exported
    sources["src/pkg/__init__.py"] = "from .mod import *\n"
    assert reexports(planned_calls("def b():\n    return 2\n", places, sources), sources, task) == []


def test_a_new_function_the_task_lists_in_all_is_appended_to_the_all_it_names() -> None:
    from cli_agent.agent.judge.module_names import listed

    task = "Add a function b() to pkg/more.py and list it in the module's `__all__`."
    for before, after in [("__all__ = [\n    'a',\n]", "__all__ = [\n    'a',\n    'b',\n]"),
                          ('__all__ = ["a"]', '__all__ = ["a", "b"]'), ("__all__ = ('a',)", "__all__ = ('a', 'b')")]:
        sources = {"pkg/more.py": f"{before}\n\n\ndef a():\n    return 1\n"}
        places = [Place("pkg/more.py", "a", before.count("\n") + 4, before.count("\n") + 5, whole=True)]
        calls = planned_calls("def b():\n    return 2\n", places, sources)
        assert [(c.arguments or {})["new"] for c in listed(calls, sources, task)] == [after]
        assert listed(calls, sources, "Add a function b() to pkg/more.py.") == []  # no __all__ said: none touched
        own = planned_calls(f"def b():\n    return 2\n\n\n{after}\n", places, sources, tables={"__all__"})
        assert listed(own, sources, task) == []  # the reply's own __all__ is taken as it is
    from cli_agent.agent.judge.module_names import shown_all

    long = "__all__ = [\n" + "".join(f"    'name_{n}',\n" for n in range(150)) + "]\n"
    assert shown_all({"pkg/more.py": long}) == []  # more than a small model copies back: listed for it instead


def test_the_renames_a_task_states_are_read_new_name_to_old() -> None:
    from cli_agent.agent.judge.proof.statements import renames

    assert renames("Rename `soft_str` to `soft_text` everywhere; keep the API") == {"soft_text": "soft_str"}
    assert renames("Rename the function pkg.old_name as new_name.") == {"new_name": "old_name"}
    assert renames("Fix the rename button") == {}
    assert renames("Rename the function iter_length in more_itertools/more.py to ilen, everywhere in that module") \
        == {"ilen": "iter_length"}  # where it is, between the old name and the new


@pytest.mark.slow
def test_a_candidate_that_made_no_change_does_not_use_up_a_turn_while_time_is_left(tmp_path: Path, calc) -> None:
    ws, home = calc
    nothing = [{"text": "I would not change anything."}] * SAMPLES  # the rewrite candidate places nothing
    fix = {"tool_calls": [{"name": "edit_file", "arguments": {"path": "calc.py", "old": "a - b", "new": "a + b"}}]}
    code, report, _ = run(tmp_path, ws, home, [READ, WRONG, DONE, *nothing, READ, fix, DONE], "--attempts", "2")
    assert code == 0 and report["verified"] is True and report["attempt"] == 3, report
    assert any("made no change; one more is sampled in its place" in w for w in report["warnings"]), report
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"


def test_a_renamed_definition_that_lands_is_listed_in_all_under_its_new_name() -> None:
    source = '__all__ = [\n    "helper",\n    "other",\n]\n\n\ndef helper(x):\n    return x\n'
    places = [Place("m.py", "helper", 7, 8, whole=True)]
    calls = planned_calls("def assist(x):\n    return x\n", places, {"m.py": source}, {"assist": "helper"})
    assert [c.name for c in calls] == ["replace_lines", "replace_definition"]
    assert (calls[0].arguments or {})["new"] == '__all__ = [\n    "assist",\n    "other",\n]'
    # a reply that gives its own __all__ is taken as it is
    own = planned_calls('def assist(x):\n    return x\n\n\n__all__ = ["assist"]\n', places, {"m.py": source},
                        {"assist": "helper"})
    assert [(c.arguments or {}).get("new") for c in own if c.name == "replace_lines"] == ['__all__ = ["assist"]']


@pytest.fixture
def calc_rewrite_first(tmp_path: Path) -> tuple[Path, Path]:
    return calc_project(tmp_path, f"test_command = {json.dumps(PYTEST)}\nverify_rounds = 0\nrewrite_first = true\n")


@pytest.mark.slow
def test_rewrite_first_asks_for_the_rewrite_before_any_step_of_the_loop(tmp_path: Path, calc_rewrite_first) -> None:
    ws, home = calc_rewrite_first
    code, report, trace = run(tmp_path, ws, home, [REWRITE], "--attempts", "3")
    assert code == 0 and report["verified"] is True and report["attempt"] == 1, report
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    events = [json.loads(line) for line in trace.splitlines()]
    asked = [e.get("candidate") for e in events if e["type"] == "model_request"]
    assert asked == [1]  # the one request is candidate 1's rewrite; the run itself asked nothing
    assert "the first attempt gave way to the rewrite (rewrite_first)" in trace


@pytest.mark.slow
def test_rewrite_first_then_the_loop_when_no_rewrite_passes(tmp_path: Path, calc_rewrite_first) -> None:
    ws, home = calc_rewrite_first
    wrong = {"text": "```python\ndef add(a, b):\n    return b - a\n```"}
    code, report, trace = run(tmp_path, ws, home, [*[wrong] * SAMPLES, READ, RIGHT, DONE], "--attempts", "3")
    assert code == 0 and report["verified"] is True and report["attempt"] == 2, report  # candidate 2: the loop
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    events = [json.loads(line) for line in trace.splitlines()]
    tools = [e["tool"] for e in events if e["type"] == "tool_result"]
    assert tools[-1] == "attempts" and "candidate 1 of 3 did not pass" in trace

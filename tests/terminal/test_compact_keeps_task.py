"""A compaction keeps the task: in a pseudo-terminal, `/compact` and the automatic compaction near the context
window leave the next request holding the user's first prompt word for word, the plan, the changed files with
their undo turns and the last verification verdict, whatever the model's own summary says."""

from __future__ import annotations

import json

import pytest
from clikit import user_config
from termkit import PROMPT, QUESTION, Term

pytestmark = pytest.mark.slow

FIRST = "FIRST PROMPT: make hello.txt say exactly 'hi', keep it ASCII; then tell me — with ümlauts — what you did."
PLAN = {"name": "update_plan", "arguments": {"steps": [{"step": "write hello.txt", "status": "completed"},
                                                        {"step": "report back", "status": "in_progress"}]}}
CREATE = {"name": "create_file", "arguments": {"path": "hello.txt", "content": "hi\n"}}


def requests(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def user_texts(request):
    return "\n".join(m["content"] for m in request if m["role"] == "user" and isinstance(m["content"], str))


def assert_task_kept(request):
    held = user_texts(request)
    assert FIRST in held  # word for word
    assert "- [completed] write hello.txt" in held and "- [in_progress] report back" in held
    assert "hello.txt" in held.split("Files changed so far")[1].split("\n\n")[0]
    assert "The last verification: " in held and "tests pass" in held
    assert "a useless summary" in held  # the model's narrative, after what is carried over


def start(tmp_path, replies, config):
    record = tmp_path / "requests.jsonl"
    user_config(tmp_path / "home", config)
    (tmp_path / "ws").mkdir()
    t = Term(tmp_path, {"replies": replies, "record": str(record)}, cols=120)  # type: ignore[arg-type]
    return t, record


def first_turn(t):
    t.say(FIRST)
    t.expect(QUESTION)
    t.child.send("y")
    t.expect("done with hello")
    t.expect(PROMPT)


def test_compact_keeps_the_prompts_plan_files_and_verdict(tmp_path):
    replies = [{"tool_calls": [PLAN, CREATE]}, {"text": "done with hello"},
               {"text": "a useless summary"}, {"text": "still on it"}]
    t, record = start(tmp_path, replies, 'test_command = "true"\n')
    first_turn(t)
    t.say("/compact")
    t.expect("compacted: the summary above replaces the conversation")
    t.expect(PROMPT)
    t.say("go on")
    t.expect("still on it")
    t.expect(PROMPT)
    assert t.quit() == 0
    last = requests(record)[-1]
    assert len(last) == 4  # system, the summary, its acknowledgement, "go on"
    assert_task_kept(last)


def test_the_automatic_compaction_keeps_them_too(tmp_path):
    replies = [{"tool_calls": [PLAN, CREATE]},
               {"text": "done with hello", "usage": {"prompt_tokens": 9500, "completion_tokens": 10}},
               {"text": "a useless summary"}, {"text": "still on it"}]
    t, record = start(tmp_path, replies, 'test_command = "true"\ncontext_window = 10000\n')
    first_turn(t)
    t.say("next")
    t.expect("compacting")
    t.expect("still on it")
    t.expect(PROMPT)
    assert t.quit() == 0
    last = requests(record)[-1]
    assert_task_kept(last)
    assert user_texts(last).endswith("next")

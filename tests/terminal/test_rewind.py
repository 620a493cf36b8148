"""`/rewind` in a pseudo-terminal: back to before an earlier prompt, the conversation and the files, the
conversation only, or the files only; the prompt comes back in the input; the next request holds nothing from after
the rewind point, and a later `-c` starts from it too. Esc Esc on an empty prompt opens it."""

from __future__ import annotations

import json

import pytest
from clikit import cli
from termkit import PROMPT, QUESTION, Term, create

pytestmark = pytest.mark.slow

DOWN, ENTER = "\x1b[B", "\r"
RESTORE = {"both": "", "conversation": DOWN, "files": DOWN + DOWN}


def requests(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def said(request):
    return [m["content"] for m in request if m["role"] in ("user", "assistant") and isinstance(m["content"], str)]


def two_turns(tmp_path, *extra):
    record = tmp_path / "requests.jsonl"
    replies = [{"tool_calls": [create("a.txt", "alpha\n")]}, {"text": "made a"},
               {"tool_calls": [create("b.txt", "beta\n")]}, {"text": "made b"}, *extra]
    t = Term(tmp_path, {"replies": replies, "record": str(record)}, cols=120)  # type: ignore[arg-type]
    for name in ("a", "b"):
        t.say(f"make {name}")
        t.expect(QUESTION)
        t.child.send("y")
        t.expect(f"made {name}")
        t.expect(PROMPT)
    return t, record


@pytest.mark.parametrize("what", ["both", "conversation", "files"])
def test_rewind_to_before_the_last_prompt(tmp_path, what):
    t, record = two_turns(tmp_path, {"text": "again"})
    t.say("/rewind")
    listed = t.expect("make a")
    assert "make b  (b.txt)" in listed  # newest first, with the files its turn changed
    t.child.send(ENTER)
    t.expect("Restore what")
    t.child.send(RESTORE[what] + ENTER)
    t.expect(r"> (?:\x1b\[[0-9;]*m)*make b")  # the prompt is back in the input
    t.say(" twice")
    t.expect("again")
    t.expect(PROMPT)
    assert t.quit() == 0
    assert (t.ws / "a.txt").exists()
    assert (t.ws / "b.txt").exists() == (what == "conversation")
    last = said(requests(record)[-1])
    if what == "files":  # the conversation goes on whole, told of the restore
        assert "made b" in last and "put the files back" in " ".join(last)
    else:
        assert last == ["make a", "made a", "make b twice"]  # nothing from after the rewind point
    assert last[-1] == "make b twice"


def test_esc_esc_opens_it_and_a_resume_starts_from_the_rewound_point(tmp_path):
    t, _ = two_turns(tmp_path)
    t.child.send("\x1b\x1b")
    t.expect("Rewind to before which prompt")
    t.child.send(DOWN + ENTER)  # the older one: "make a"
    t.expect("Restore what")
    t.child.send(ENTER)
    t.expect("conversation rewound to before: make a")
    t.expect(r"> (?:\x1b\[[0-9;]*m)*make a")  # back in the input
    t.child.sendcontrol("c")  # drops the line
    assert t.quit() == 0
    assert not (t.ws / "a.txt").exists() and not (t.ws / "b.txt").exists()
    script = tmp_path / "resumed.json"
    script.write_text(json.dumps({"replies": [{"text": "fresh"}], "record": str(tmp_path / "resumed.jsonl")}))
    done = cli(["-c", "-p", "start over", "-C", str(t.ws), "--model", f"scripted:{script}"], home=t.home)
    assert done.returncode == 0, done.stderr
    assert said(requests(tmp_path / "resumed.jsonl")[-1]) == ["start over"]
    resets = [r for r in t.traces() if r["type"] == "conversation_reset"]
    assert [r["kind"] for r in resets] == ["rewind"]  # the trace keeps the runs, and marks them rewound
    again = Term(tmp_path, [{"text": "unused"}], args=("-c",), cols=120, wait=None)
    shown = again.expect("resumed: the conversation goes on from here")
    assert "2 turns rewound (/rewind" in " ".join(shown.split()) and "start over" in shown
    again.expect(PROMPT)
    assert again.quit() == 0

"""What a small model needs from the loop and the edit tools: recoverable terminating calls, no false success,
read before edit, forgiving edit matching, and insert_text (scripted provider over a real workspace)."""

from __future__ import annotations

import json

import pytest
from agentkit import call, make_agent, run

from cli_agent.agent.repeats import REPEAT_NOTE
from cli_agent.cli.main import run as cli_run
from cli_agent.contracts.envelope import ToolError
from cli_agent.contracts.events import StopReason, ToolResult
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.tools import ToolContext
from cli_agent.tools.context import SeenFiles
from cli_agent.tools.handlers.files import edit_file
from cli_agent.tools.handlers.insert import insert_text


def json_call(tool: str, terminate: bool = False, **parameters: object) -> dict[str, str]:
    return {"raw": json.dumps({"tool": tool, "parameters": parameters, "terminate": terminate})}


def results(events):
    return [(e.tool, e.envelope.ok) for e in events if isinstance(e, ToolResult)]


# -- a terminating call that fails goes back to the model ----------------------------------------------------

def test_a_failed_terminating_call_goes_back_to_the_model(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    agent, provider = make_agent(tmp_path, [
        json_call("read_file", path="a.py"),
        json_call("edit_file", terminate=True, path="a.py", old="x = 2\n", new="x = 3\n"),
        json_call("edit_file", terminate=True, path="a.py", old="x = 1\n", new="x = 3\n"),
    ], protocol="json", yes=True, read_first=True)
    events, finished = run(agent, "set x to 3")
    assert finished.stop_reason is StopReason.DONE and finished.exit_code == 0
    assert results(events) == [("read_file", True), ("edit_file", False), ("edit_file", True)]
    assert "not found" in provider.requests[2].messages[-1].content  # the model saw the error
    assert (tmp_path / "a.py").read_text() == "x = 3\n"


def test_failed_terminating_calls_still_end_at_the_step_limit(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    bad = json_call("edit_file", terminate=True, path="a.py", old="nope\n", new="x\n")
    agent, _ = make_agent(tmp_path, [bad, bad], protocol="json", yes=True, max_steps=2)
    _, finished = run(agent, "go")
    assert finished.stop_reason is StopReason.STEP_LIMIT and finished.exit_code == 4


# -- the same failing call again and again -------------------------------------------------------------------

def test_the_same_failing_change_three_times_ends_the_run_as_a_failed_change(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    bad = json_call("edit_file", path="a.py", old="x = 2\n", new="x = 3\n")
    agent, provider = make_agent(tmp_path, [bad] * 12, protocol="json", yes=True, max_steps=12)
    _, finished = run(agent, "set x to 3")
    assert finished.stop_reason is StopReason.CHANGE_FAILED and finished.exit_code == 7 and finished.steps == 3
    assert "same failing call 3 times in a row" in finished.message and "not found" in finished.message
    assert finished.failed_change is not None and finished.failed_change["arguments"]["old"] == "x = 2\n"
    warned = [json.loads(m.content.partition("\n")[2])["warnings"] for m in provider.requests[2].messages
              if m.role == "user" and m.content.startswith("Result of edit_file")]
    assert warned[-1] == [REPEAT_NOTE] and warned[0] == []  # said with the second failure, not the first
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_a_repeated_failing_read_ends_as_unusable_and_only_a_change_that_lands_resets_the_count(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    missing = json_call("read_file", path="b.py")
    edit = json_call("edit_file", path="a.py", old="x = 1\n", new="x = 2\n")
    agent, _ = make_agent(tmp_path, [missing, missing, json_call("read_file", path="a.py"), edit,
                                     missing, missing, json_call("read_file", path="c.py"), missing],
                          protocol="json", yes=True, max_steps=12)
    events, finished = run(agent, "read b")
    assert finished.stop_reason is StopReason.UNUSABLE and finished.exit_code == 6 and finished.steps == 8
    assert [ok for _, ok in results(events)] == [False, False, True, True, False, False, False, False]
    assert "3 times since the last change that landed" in finished.message


def test_two_failing_changes_in_turn_end_the_run_as_surely_as_one(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    same = json_call("edit_file", path="a.py", old="x = 1\n", new="x = 1\n")
    missing = json_call("edit_file", path="a.py", old="x = 9\n", new="x = 3\n")
    agent, _ = make_agent(tmp_path, [same, missing] * 10, protocol="json", yes=True, max_steps=20)
    _, finished = run(agent, "set x to 3")
    assert finished.stop_reason is StopReason.CHANGE_FAILED and finished.exit_code == 7 and finished.steps == 5
    assert "same failing call 3 times since the last change that landed" in finished.message
    assert (tmp_path / "a.py").read_text() == "x = 1\n"


def test_reads_between_the_same_failing_edit_do_not_hide_that_it_is_stuck(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    bad = json_call("edit_file", path="a.py", old="x = 2\n", new="x = 3\n")
    read = json_call("read_file", path="a.py")
    agent, provider = make_agent(tmp_path, [bad, read, bad, read, bad, read], protocol="json", yes=True,
                                 max_steps=12)
    _, finished = run(agent, "set x to 3")
    assert finished.stop_reason is StopReason.CHANGE_FAILED and finished.exit_code == 7 and finished.steps == 5
    seen = [m.content for m in provider.requests[-1].messages if m.role == "user"]
    assert sum(REPEAT_NOTE in text for text in seen) == 1  # the second failure said it will fail again
    assert "replace_lines" in seen[1]  # and the first pointed at the form with nothing to copy


# -- no false success ----------------------------------------------------------------------------------------

def test_an_answer_after_a_failed_change_is_not_success(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="a.py")]},
        {"tool_calls": [call("edit_file", path="a.py", old="y = 1", new="y = 2")]},
        {"text": "Done: y is 2 now."},
    ], yes=True, read_first=True)
    _, finished = run(agent, "set y")
    assert finished.stop_reason is StopReason.CHANGE_FAILED and finished.exit_code == 7
    assert finished.answer == "Done: y is 2 now." and "edit_file a.py" in finished.message
    assert finished.failed_change is not None and finished.failed_change["tool"] == "edit_file"
    assert finished.failed_change["arguments"]["old"] == "y = 1"


def test_a_change_that_succeeds_after_a_failed_one_is_success(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="a.py")]},
        {"tool_calls": [call("edit_file", path="a.py", old="x = 2", new="x = 3")]},
        {"tool_calls": [call("edit_file", path="a.py", old="x = 1", new="x = 3")]},
        {"text": "x is 3."},
    ], yes=True, read_first=True)
    _, finished = run(agent, "set x")
    assert finished.stop_reason is StopReason.DONE and finished.failed_change is None


def test_a_question_answered_without_changes_is_success(tmp_path):
    (tmp_path / "a.py").write_text("x = 1\n")
    agent, _ = make_agent(tmp_path, [{"tool_calls": [call("read_file", path="nope.py")]},
                                     {"text": "There is no nope.py."}], read_first=True)
    _, finished = run(agent, "what is in nope.py?")
    assert finished.stop_reason is StopReason.DONE and finished.exit_code == 0


def test_json_output_names_the_failed_change(tmp_path, capsys, isolated_home):
    (tmp_path / "a.py").write_text("x = 1\n")
    provider = ScriptedProvider([{"tool_calls": [call("read_file", path="a.py")]},
                                 {"tool_calls": [call("edit_file", path="a.py", old="zz", new="y")]},
                                 {"text": "done"}], native_tools=True)
    code = cli_run(["-C", str(tmp_path), "-p", "edit", "--model", "x", "-y", "-o", "json"],
                   provider_factory=lambda settings: provider)
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 7 and report["exit_code"] == 7 and report["status"] == "change_failed"
    assert report["failed_change"]["tool"] == "edit_file" and report["failed_change"]["arguments"]["path"] == "a.py"
    assert "not found" in report["failed_change"]["errors"][0]
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("cli-agent: ") and "failed change" in last


# -- read before edit ----------------------------------------------------------------------------------------

def test_an_edit_of_an_unread_file_shows_the_region_then_succeeds(tmp_path):
    (tmp_path / "m.py").write_text("".join(f"line{i} = {i}\n" for i in range(1, 41)))
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("edit_file", path="m.py", old="line20 = 2O\n", new="line20 = 200\n")]},
        {"tool_calls": [call("edit_file", path="m.py", old="line20 = 20\n", new="line20 = 200\n")]},
        {"text": "changed"},
    ], yes=True, read_first=True)
    events, finished = run(agent, "change line 20 of m.py")
    assert results(events) == [("edit_file", False), ("edit_file", True)] and finished.exit_code == 0
    told = json.loads(provider.requests[1].messages[-1].content)
    assert "was not read in this conversation" in told["errors"][0]
    assert "20| line20 = 20" in told["data"]["region"] and "40|" not in told["data"]["region"]


def test_a_cleared_conversation_has_read_nothing(tmp_path):
    (tmp_path / "a.txt").write_text("one\n")
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="a.txt")]}, {"text": "read"},
        {"tool_calls": [call("edit_file", path="a.txt", old="one", new="two")]}, {"text": "x"},
    ], yes=True, read_first=True)
    run(agent, "read a.txt")
    agent.clear()
    events, _ = run(agent, "edit it")
    assert results(events) == [("edit_file", False)]


# -- forgiving matching --------------------------------------------------------------------------------------

@pytest.fixture
def ctx(tmp_path):
    seen = SeenFiles()
    seen.note("f.py")
    return ToolContext(Workspace(tmp_path), seen=seen)


SOURCE = "class A:\n    def f(self):  \n        if self.x:\n            return 1\n        return 2\n"


@pytest.mark.parametrize(("old", "new", "rule", "expected"), [
    ("    def f(self):\n", "    def f(self, y):\n", "trailing whitespace ignored",
     SOURCE.replace("def f(self):  ", "def f(self, y):")),
    ("if self.x:\n    return 1\n", "if self.x:\n    return 10\n", "indentation ignored",
     SOURCE.replace("return 1\n", "return 10\n")),
    ("        return 2\r\n", "        return 3\r\n", "line endings ignored", SOURCE.replace("return 2", "return 3")),
])
def test_loose_rules_apply_a_unique_match_and_say_which(ctx, tmp_path, old, new, rule, expected):
    (tmp_path / "f.py").write_text(SOURCE)
    change = edit_file(ctx, "f.py", old, new)
    assert change.after == expected.encode() and f"matched with {rule}" in change.summary
    assert change.diff().count("\n+") >= 1  # the approval diff is computed from exactly these bytes


@pytest.mark.parametrize(("old", "new", "expected_tail"), [
    # old written one level too shallow; new adds a method after it, at old's level minus one
    ("    return 2\n", "    return 2\n\ndef g(self):\n    return 3\n",
     "        return 2\n\n    def g(self):\n        return 3\n"),
    # old written one level too deep; new's second line is less indented than old
    ("            return 2\n", "            return 2\n        # after f\n",
     "        return 2\n    # after f\n"),
])
def test_reindenting_keeps_the_nesting_among_new_lines(ctx, tmp_path, old, new, expected_tail):
    (tmp_path / "f.py").write_text(SOURCE)
    change = edit_file(ctx, "f.py", old, new)
    assert change.after.decode().endswith(expected_tail) and "matched with indentation ignored" in change.summary
    compile(change.after, "f.py", "exec")  # still Python: the added method's body is inside it


def test_a_method_added_before_another_lands_in_the_class(ctx, tmp_path):
    """The real suite's is-empty run: old written without the class's indentation, the added lines in old's frame,
    the repeated anchor line in the file's. Shifted alike, the anchor would nest in the new method (no longer
    Python); the reading that keeps the anchor where it is parses, and is taken."""
    source = "class M:\n    def a(self):\n        return 1\n\n    def striptags(self, /) -> str:\n        return ''\n"
    (tmp_path / "f.py").write_text(source)
    new = "def is_empty(self) -> bool:\n    return self.striptags() == ''\n\n    def striptags(self, /) -> str:"
    change = edit_file(ctx, "f.py", "def striptags(self, /) -> str:", new)
    added = "    def is_empty(self) -> bool:\n        return self.striptags() == ''\n\n"
    assert change.after.decode() == source.replace("    def striptags", added + "    def striptags")
    assert "the lines of old kept where they are" in change.summary


def test_wrapping_the_anchor_in_a_block_keeps_the_uniform_shift(ctx, tmp_path):
    source = "def f():\n    go()\n    return 1\n"
    (tmp_path / "f.py").write_text(source)
    change = edit_file(ctx, "f.py", "go()\n", "if ready:\n    go()\n")
    assert change.after.decode() == "def f():\n    if ready:\n        go()\n    return 1\n"
    assert "kept where they are" not in change.summary


def test_a_loose_match_in_several_places_is_refused(ctx, tmp_path):
    (tmp_path / "f.py").write_text("def a():\n    pass  \n\ndef b():\n        pass\n")
    with pytest.raises(ToolError) as info:
        edit_file(ctx, "f.py", "pass\npass\n", "return 1\n")
    assert "not found" in info.value.message
    (tmp_path / "f.py").write_text("def a():\n    go()  \n\ndef b():\n        go() \n")
    with pytest.raises(ToolError) as info:
        edit_file(ctx, "f.py", "go()\n", "return 1\n")
    assert "several places" in info.value.message and info.value.hints["lines"] == [2, 5]


def test_the_same_words_nested_differently_do_not_match(ctx, tmp_path):
    (tmp_path / "f.py").write_text("if a:\n    if b:\n        go()\n")
    with pytest.raises(ToolError) as info:
        edit_file(ctx, "f.py", "if a:\nif b:\n    go()\n", "x\n")
    assert "only in whitespace" in info.value.message


def test_loose_matching_is_bounded_on_hostile_input(ctx, tmp_path):
    (tmp_path / "f.py").write_text("x\n" * 200_000)
    with pytest.raises(ToolError):
        edit_file(ctx, "f.py", "  x\n" * 50 + "  y\n", "z\n")


# -- insert_text ---------------------------------------------------------------------------------------------

def test_insert_text_appends_without_an_anchor_and_needs_no_read(tmp_path):
    (tmp_path / "m.py").write_text("def a():\n    return 1")
    agent, _ = make_agent(tmp_path, [
        {"tool_calls": [call("insert_text", path="m.py", text="\n\ndef b():\n    return 2\n")]},
        {"text": "added b"},
    ], yes=True, read_first=True)
    _, finished = run(agent, "add b")
    assert finished.exit_code == 0
    assert (tmp_path / "m.py").read_text() == "def a():\n    return 1\n\n\ndef b():\n    return 2\n"


@pytest.mark.parametrize(("after", "expected"), [(0, "X\na\nb\n"), (1, "a\nX\nb\n"), (2, "a\nb\nX\n")])
def test_insert_text_after_a_line(ctx, tmp_path, after, expected):
    (tmp_path / "f.py").write_text("a\nb\n")
    change = insert_text(ctx, "f.py", "X", after_line=after)
    assert change.after == expected.encode() and change.kind == "edit"


def test_insert_text_keeps_crlf_and_refuses_a_line_past_the_end(ctx, tmp_path):
    (tmp_path / "f.py").write_bytes(b"a\r\nb\r\n")
    assert insert_text(ctx, "f.py", "X\n", after_line=1).after == b"a\r\nX\r\nb\r\n"
    with pytest.raises(ToolError) as info:
        insert_text(ctx, "f.py", "X\n", after_line=9)
    assert "has 2 lines" in info.value.message


def test_insert_text_at_a_line_of_an_unread_file_shows_it_first(tmp_path):
    (tmp_path / "g.py").write_text("a\nb\n")
    ctx = ToolContext(Workspace(tmp_path), seen=SeenFiles())
    with pytest.raises(ToolError) as info:
        insert_text(ctx, "g.py", "X\n", after_line=1)
    assert "1| a" in info.value.hints["region"]
    assert insert_text(ctx, "g.py", "X\n", after_line=1).after == b"a\nX\nb\n"


# -- Python that still parses ----------------------------------------------------------------------------------

def test_a_change_that_would_break_a_python_file_is_refused_with_the_error_and_its_lines(tmp_path):
    source = "def f(x):\n    return x\n\n\ndef g():\n    return 1\n"
    (tmp_path / "m.py").write_text(source)
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="m.py")]},
        {"tool_calls": [call("edit_file", path="m.py", old="def g():\n    return 1\n",
                             new="def g():\nreturn 2\n")]},  # the body lost its indentation
        {"tool_calls": [call("edit_file", path="m.py", old="def g():\n    return 1\n",
                             new="def g():\n    return 2\n")]},
        {"text": "Done."}], yes=True, read_first=True)
    events, finished = run(agent, "make g return 2 in m.py")
    assert results(events) == [("read_file", True), ("edit_file", False), ("edit_file", True)]
    refusal = provider.requests[2].messages[-1].content
    assert "unable to run: IndentationError" in refusal and "nothing was changed" in refusal
    assert "6| return 2" in refusal  # the line as it would have been, numbered
    assert finished.exit_code == 0 and (tmp_path / "m.py").read_text() == source.replace("return 1", "return 2")


@pytest.mark.parametrize(("name", "before", "check", "applied"), [
    ("broken.py", "def f(:\n    pass\n", True, True),  # already broken: a fix in several steps stays possible
    ("notes.txt", "def f():\n    pass\n", True, True),  # not Python
    ("m.py", "def f():\n    pass\n", False, True),  # switched off
    ("m.py", "def f():\n    pass\n", True, False),
])
def test_only_a_python_file_that_parsed_is_guarded_and_the_switch_turns_it_off(tmp_path, name, before, check,
                                                                               applied):
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.tools.registry import Registry

    (tmp_path / name).write_text(before)
    ctx = ToolContext(Workspace(tmp_path), syntax_check=check)
    arguments = {"path": name, "text": "  oops(\n"}
    prepared = Dispatcher(Registry.builtin(), ctx).prepare(ToolCall("c1", "insert_text", arguments, json.dumps(
        arguments)))
    assert (prepared.change is not None) is applied
    assert applied or "unable to run: IndentationError" in prepared.error.errors[0]

"""The compact transcript on fixed-width recording consoles: one-line read-only calls grouped, truncation said in
the call's own line with what the model received, an interrupted answer kept, the approval question's one-line
answers and what stays once it is answered; and deny-with-feedback through the real loop."""

from __future__ import annotations

import io

import pytest
from agentkit import call, make_agent, run
from rich.console import Console

from cli_agent.agent.context_window import for_model as _for_model
from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.events import (
    ApprovalAsked,
    ApprovalDecided,
    Decision,
    ModelRequest,
    RunFinished,
    RunStarted,
    StopReason,
    TextDelta,
    ToolCallsProposed,
    ToolResult,
    Warning,
)
from cli_agent.contracts.messages import ToolCall
from cli_agent.contracts.outcomes import Answer
from cli_agent.ui.view.approve import TerminalApprover, choices, decided_line
from cli_agent.ui.view.render import Renderer
from cli_agent.ui.view.transcript import compact_line, mcp_summary, received_lines, result_line

WIDTHS = (60, 80, 120)


def tc(name: str, **arguments) -> ToolCall:
    return ToolCall(f"id-{name}-{len(arguments)}-{sorted(arguments.items())}", name, arguments, "")


def play(*events, width: int = 80, terminal: bool = False) -> str:
    c = Console(record=True, width=width, color_system=None, force_terminal=terminal)
    renderer = Renderer(c)
    for event in (RunStarted("r1", "task", "m", "native", "/ws"), *events):
        renderer(event)
    renderer.close()
    return c.export_text()


def read_result(c: ToolCall, lines: int = 10, **extra) -> ToolResult:
    content = "".join(f"line {i}\n" for i in range(1, lines + 1))
    data = {"path": (c.arguments or {})["path"], "content": content, "start_line": 1, "end_line": lines,
            "total_lines": lines, "truncated": False}
    return ToolResult(c.id, "read_file", Envelope.success(data), **extra)


@pytest.mark.parametrize("width", WIDTHS)
def test_consecutive_reads_take_one_line_each_under_one_bullet_and_a_change_keeps_its_panel(width):
    a, b, s = tc("read_file", path="app.py"), tc("read_file", path="src/b.py"), tc("search", pattern="TODO")
    edit = tc("edit_file", path="app.py", old="x", new="y")
    again = tc("list_files", path="src")
    change = Change("edit_file", "edit", "app.py", b"x\n", b"y\n")
    matches = [{"path": "app.py", "line": 3, "text": "# TODO"}]
    out = play(ToolCallsProposed((a, b, s)), read_result(a), read_result(b, 30),
               ToolResult(s.id, "search", Envelope.success({"matches": matches, "count": 1, "files_searched": 7})),
               ToolCallsProposed((edit,)), ApprovalDecided(edit.id, Decision.YES, "policy", 'approval = "all"'),
               ToolResult(edit.id, "edit_file", Envelope.success({}), change),
               ToolCallsProposed((again,)),
               ToolResult(again.id, "list_files", Envelope.success({"entries": ["a", "b"], "count": 2})),
               width=width)
    lines = out.splitlines()
    assert lines[0] == "● Read(app.py) ⎿ 10 lines"
    assert lines[1] == "  Read(src/b.py) ⎿ 30 lines"
    assert lines[2] == '  Search("TODO") ⎿ 1 match in 1 file'
    assert "edit_file app.py" in lines[3] and "╭" in lines[3]  # the change keeps its panel
    assert "-x" in out and "+y" in out and "✓ edit_file app.py  edited (+1 -1 lines)" in out
    assert lines[-1] == "● List(src) ⎿ 2 entries"  # a new group after the panel
    assert all(len(line) <= width for line in lines)


def test_a_failed_read_is_one_red_line_with_the_error():
    c = tc("read_file", path="nope.py")
    out = play(ToolResult(c.id, "read_file", Envelope.failure("nope.py does not exist; did you mean app.py?")))
    assert out.strip() == "● Read ⎿ ✗ nope.py does not exist; did you mean app.py?"  # even without its call
    out = play(ToolCallsProposed((c,)), ToolResult(c.id, "read_file", Envelope.failure("nope.py does not exist")))
    assert out.strip() == "● Read(nope.py) ⎿ ✗ nope.py does not exist"


def test_a_cut_read_says_which_lines_the_model_got_in_its_own_line_and_no_warning_above_it():
    c = tc("read_file", path="big.txt")
    result = read_result(c, 3000)
    limit = 20_000
    text, cut = _for_model(result.envelope, limit)
    assert cut
    got = received_lines(result.envelope.to_json(), limit)
    assert text.count("\\n") in (got, got - 1)  # every whole line the model got, and the partial last one
    cut_result = ToolResult(c.id, "read_file", result.envelope, model_chars=limit)
    out = play(ToolCallsProposed((c,)), cut_result,
               Warning("truncated", "the result of read_file was 30,000 characters too long for the model"),
               width=120)
    total = len(result.envelope.to_json())
    assert out.splitlines() == [f"● Read(big.txt) ⎿ lines 1-{got:,} of 3,000  (cut to fit: the model got "
                                f"{limit:,} of {total:,} characters)"]
    assert 1000 < got < 3000


def test_a_capped_search_says_so_and_counts_the_files_that_matched():
    s = tc("search", pattern="x")
    matches = [{"path": f"f{i % 4}.py", "line": i, "text": "x"} for i in range(200)]
    data = {"matches": matches, "count": 200, "files_searched": 950, "truncated": True,
            "notice": "showing the first 200 matches; narrow the search with path= or glob="}
    line = compact_line(ToolResult(s.id, "search", Envelope.success(data)), s).plain
    assert line == ('● Search("x") ⎿ 200 matches in 4 files (capped: showing the first 200 matches; narrow the '
                    "search with path= or glob=)")


def test_ctrl_c_while_text_streams_keeps_the_partial_answer_marked_interrupted():
    out = play(ModelRequest(1, "f", 1), TextDelta("The bug is in "), TextDelta("**parse()**, where"),
               RunFinished(StopReason.INTERRUPTED, "interrupted by the user (Ctrl-C)"), terminal=True)
    assert "The bug is in parse(), where" in out
    assert out.index("(interrupted)") > out.index("where")
    assert "interrupted: nothing was half-written" in out


# -- the approval question ---------------------------------------------------------------------------------------

def asked(total: int = 1, change: Change | None = None) -> ApprovalAsked:
    return ApprovalAsked(ToolCall("c1", "create_file", {"path": "a.txt", "content": "x\n"}, ""), change, 1, total)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_answers_are_one_line_that_reflows_under_its_indent(width):
    c = Console(record=True, width=width, color_system=None)
    approver = TerminalApprover(c, read=lambda q: "y", show_panel=False)
    assert approver(asked(change=Change("create_file", "create", "a.txt", None, b"x\n"))) is Decision.YES
    lines = c.export_text().splitlines()
    legend, decided = lines[:-1], lines[-1]
    assert all(line.startswith("  ") and len(line) <= width for line in legend)  # never flush-left
    assert len(legend) == (1 if width >= 200 else len(legend))
    assert "v view all" in " ".join(legend)
    assert decided == "  ✓ yes"
    if width == 120:
        assert len(legend) <= 2


def test_f_denies_with_words_for_the_model():
    c = Console(record=True, width=80, color_system=None)
    approver = TerminalApprover(c, read=lambda q: "f", read_feedback=lambda p: "  use   pathlib instead ",
                                show_panel=False)
    answer = approver(asked())
    assert answer == Answer(Decision.FEEDBACK, "use pathlib instead")
    assert c.export_text().splitlines()[-1] == "  ✗ no, and the model is told: use pathlib instead"
    empty = TerminalApprover(Console(file=io.StringIO()), read=lambda q: "f", read_feedback=lambda p: "")
    assert empty(asked()) is Decision.NO  # no words: a plain no


def test_v_pages_the_whole_content_then_asks_again():
    content = "".join(f"row {i}\n" for i in range(500))
    change = Change("create_file", "create", "big.txt", None, content.encode())
    c = Console(record=True, width=80, color_system=None)
    keys = iter(["v", "y"])
    approver = TerminalApprover(c, read=lambda q: next(keys))
    assert approver(asked(change=change)) is Decision.YES
    out = c.export_text()
    assert "row 499" in out  # the pager got all of it (a recording console is its own pager)
    assert "470 more lines" in out  # the panel folds it


def test_decided_lines():
    assert decided_line(Decision.NO).plain == "  ✗ no: the turn stops"
    assert decided_line(Decision.ALL).plain == "  ✓ yes to all, for this session"
    assert "'x' is not an answer" in decided_line(Decision.NO, unrecognised="x").plain
    assert "f no, and tell the model" in choices(asked()).plain


def test_feedback_goes_to_the_model_as_the_calls_answer_and_the_turn_goes_on(tmp_path):
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("create_file", path="a.txt", content="a\n"), call("create_file", path="b.txt",
                                                                                  content="b\n")]},
        {"tool_calls": [call("create_file", path="c.txt", content="c\n")]},
        {"text": "done the other way"}], interactive=True)
    answers = iter([Answer(Decision.FEEDBACK, "name it c.txt"), Decision.YES])
    events, finished = run(agent, "make a file", lambda a: next(answers))
    assert finished.stop_reason is StopReason.DONE and finished.answer == "done the other way"
    assert not (tmp_path / "a.txt").exists() and not (tmp_path / "b.txt").exists()
    assert (tmp_path / "c.txt").read_text() == "c\n"
    second = provider.requests[1].messages
    results = [m.content for m in second if m.role == "tool"]
    assert "denied by the user, who says: name it c.txt" in results[0]
    assert "not run: an earlier call in this turn was denied" in results[1]
    decided = [e for e in events if isinstance(e, ApprovalDecided)]
    assert decided[0].decision is Decision.FEEDBACK and decided[0].feedback == "name it c.txt"


# -- MCP results in one line -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("data", "room", "said"), [
    ({"server": "git", "text": "On branch main\nnothing to commit\n\nclean"}, 80, "On branch main (+2 lines)"),
    ({"server": "d", "text": "x" * 500}, 30, "x" * 17 + "… (500 chars)"),
    ({"server": "d", "structured": {"sum": 5}}, 80, '{"sum": 5}'),
    ({"server": "d", "items": ["[image: image/png, 10 bytes; not shown to the model]", "[resource link a: b]"]}, 40,
     "[image: image/png, 10 bytes; … (+1 more)"),
    ({"server": "d"}, 80, "no content"),
    ({"server": "d", "text": "\x1b[31mred"}, 80, "\\x1b[31mred"),  # escaped, never sent to the terminal
])
def test_an_mcp_result_is_said_in_at_most_its_room(data, room, said):
    assert mcp_summary(data, room) == said
    assert len(mcp_summary(data, room)) <= room + 3  # an escape may lengthen it a little


@pytest.mark.parametrize("width", [60, 100])
def test_an_mcp_call_s_line_fits_the_width(width):
    big = ToolCall("c1", "demo__big", {"size": 5000}, "")
    result = ToolResult("c1", "demo__big", Envelope.success({"server": "demo", "text": "y" * 5000}))
    line = compact_line(result, big, width=width).plain
    assert line.startswith("● demo__big(size=5000) ⎿ yyy") and line.endswith("… (5,000 chars)")
    assert len(line) <= width
    done = result_line(result, big, width=width).plain
    assert done.startswith("  ✓ demo__big yyy") and len(done) <= width

"""The REPL's rendering of events, on a recording console: panels, diffs, folding, result lines, escaping."""

from __future__ import annotations

import pytest
from rich.console import Console

from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.events import (
    ApprovalDecided,
    AssistantMessage,
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
from cli_agent.contracts.messages import ToolCall, Usage
from cli_agent.ui.view.change_view import FOLD_LINES
from cli_agent.ui.view.render import Renderer, call_panel, finish_line, result_line


def console() -> Console:
    return Console(record=True, width=100, color_system=None)


def draw(*renderables) -> str:
    c = console()
    for r in renderables:
        c.print(r)
    return c.export_text()


def play(*events, protocol: str = "native") -> str:
    c = console()
    renderer = Renderer(c)
    for event in (RunStarted("r1", "task", "m", protocol, "/ws"), *events):
        renderer(event)
    renderer.close()
    return c.export_text()


def call(name: str, **arguments) -> ToolCall:
    return ToolCall(f"id-{name}", name, arguments, "")


def test_reply_is_markdown_and_model_markup_or_escapes_are_never_interpreted():
    text = "Use **bold** and [red]markup[/red] \x1b[2J\u202e\r done"
    out = play(ModelRequest(1, "f", 2), TextDelta("Use "), AssistantMessage(text),
               RunFinished(StopReason.DONE, "done", answer=text, steps=1))
    assert "Use bold and [red]markup[/red] \\x1b[2J\\u202e\\x0d done" in out
    assert "\x1b" not in out and "\u202e" not in out and "\r" not in out
    assert out.count("Use bold") == 1  # the answer is not printed twice


def test_json_protocol_shows_the_parsed_answer_not_the_raw_json():
    raw = '{"tool": null, "answer": "x"}'
    out = play(AssistantMessage(raw), RunFinished(StopReason.DONE, "done", answer="the *answer*", steps=1),
               protocol="json")
    assert "the answer" in out and raw not in out


def test_edit_shows_a_diff_and_its_result_line_says_what_changed_and_who_approved():
    edit = call("edit_file", path="a.py", old="x = 1", new="x = 2")
    change = Change("edit_file", "edit", "a.py", b"x = 1\ny = 2\n", b"x = 2\ny = 2\n", summary="1 replacement")
    out = play(ToolCallsProposed((edit,)), ApprovalDecided(edit.id, Decision.YES, "policy", 'approval = "edits"'),
               ToolResult(edit.id, "edit_file", Envelope.success({}), change))
    assert "edit_file a.py" in out
    assert "-x = 1" in out and "+x = 2" in out and " y = 2" in out
    assert '✓ edit_file a.py  edited (+1 -1 lines)  (approved by approval = "edits")' in out


def test_long_new_content_is_folded_with_the_count_of_hidden_lines():
    content = "".join(f"print({i})\n" for i in range(FOLD_LINES + 25))
    change = Change("create_file", "create", "big.py", None, content.encode())
    out = draw(call_panel(call("create_file", path="big.py", content=content), change))
    assert f"print({FOLD_LINES - 1})" in out and f"print({FOLD_LINES})" not in out
    assert "25 more lines" in out


def test_delete_shows_the_size_and_first_lines():
    change = Change("delete_file", "delete", "old.txt", b"first\nsecond\n", None)
    out = draw(call_panel(call("delete_file", path="old.txt"), change))
    assert "deletes 13 bytes, 2 lines" in out and "first" in out and "second" in out


def test_panel_title_and_arguments_are_escaped_and_not_markup():
    evil = call("read_file", path="[bold]x\x1b[2J\u202e.txt", note="a\rb")
    out = draw(call_panel(evil, index=1, total=2))
    assert "read_file [bold]x\\x1b[2J\\u202e.txt  (1/2)" in out
    assert "note: a\\x0db" in out
    assert "\x1b" not in out and "\u202e" not in out


def test_a_failed_result_is_a_red_cross_with_the_error():
    c = Console(record=True, width=100, force_terminal=True, color_system="truecolor")
    c.print(result_line(ToolResult("i", "read_file", Envelope.failure("nope.txt does not exist")),
                        call("read_file", path="nope.txt")))
    plain, styled = c.export_text(clear=False), c.export_text(styles=True)
    assert "✗ read_file nope.txt: nope.txt does not exist" in plain
    assert "\x1b[31mnope.txt does not exist" in styled  # red


def test_read_only_results_summarise_their_data():
    matches = [{"path": p, "line": 1, "text": "TODO"} for p in ("a.py", "a.py", "b.py")]
    line = result_line(ToolResult("i", "search", Envelope.success({"matches": matches, "count": 3,
                                                                   "files_searched": 9})),
                       call("search", pattern="TODO"))
    assert line.plain == "  ✓ search TODO 3 matches in 2 files"  # files matched, not files searched


def test_several_calls_are_listed_together_before_they_run():
    out = play(ToolCallsProposed((call("create_file", path="a.txt", content=""),
                                  call("delete_file", path="b.txt"))))
    assert "The model proposes 2 calls:" in out
    assert "1. create_file a.txt" in out and "2. delete_file b.txt" in out


@pytest.mark.parametrize(("reason", "message", "expected"), [
    (StopReason.DENIED, "create_file was denied by the user", "stopped: create_file was denied by the user"),
    (StopReason.INTERRUPTED, "interrupted", "interrupted: nothing was half-written"),
    (StopReason.ERROR, "could not connect", "✗ error: could not connect"),
    (StopReason.DONE, "done", "· 3 steps · 1.5s · 1,200 tokens · $0.0100"),
])
def test_finish_line_says_why_the_turn_ended(reason, message, expected):
    finished = RunFinished(reason, message, steps=3, usage=Usage(1000, 200, 0.01))
    assert expected in finish_line(finished, 1.5).plain


def test_warnings_and_non_interactive_refusals_are_shown():
    out = play(Warning("budget", "80 % of the budget used"),
               ApprovalDecided("x", Decision.NO, "non-interactive", "--yes"))
    assert "! 80 % of the budget used" in out and "refused: --yes" in out


def test_a_terminal_console_streams_into_a_live_region_that_is_cleared_before_the_markdown():
    import io

    terminal = io.StringIO()
    renderer = Renderer(Console(file=terminal, width=80, force_terminal=True, color_system=None))
    renderer(ModelRequest(1, "f", 1))
    renderer(TextDelta("partial"))
    renderer(AssistantMessage("partial answer"))
    shown = terminal.getvalue()
    before, _, after = shown.partition("partial answer")
    assert "partial" in before and "\x1b[2K" in before  # streamed into a live region, erased before the answer
    assert "partial" not in after


def test_old_results_elided_is_said_once_after_the_turn_and_does_not_split_the_grouped_reads():
    read = call("read_file", path="a.py")
    result = ToolResult("id-read_file", "read_file", Envelope.success({"content": "x\n", "start_line": 1,
                                                                        "end_line": 1, "total_lines": 1}))
    out = play(ToolCallsProposed((read,)), result,
               Warning("context_elided", "3 old tool result(s) elided to stay within the context window"),
               ToolCallsProposed((read,)), result,
               Warning("context_elided", "4 old tool result(s) elided to stay within the context window"),
               RunFinished(StopReason.DONE, "done", steps=3))
    lines = [line for line in out.splitlines() if line.strip()]
    assert lines[:2] == ["● Read(a.py) ⎿ 1 line", "  Read(a.py) ⎿ 1 line"]  # one group
    assert out.count("elided") == 1 and "! 4 old tool result(s) elided" in out


def test_a_test_run_of_the_harness_shows_its_command_then_its_verdict_and_a_failed_run_says_so():
    from cli_agent.contracts.events import Verification

    started = RunStarted(run_id="r", prompt="fix add", model="m", protocol="native", workspace="/w")
    out = play(started, ModelRequest(1, "f", 2), Verification(command="pytest -q", round=1, phase="running"),
               Verification(command="pytest -q", round=1, phase="failed", summary="1 failed, 2 passed in 0.1s"),
               Verification(command="pytest -q", round=2, phase="running"),
               Verification(command="pytest -q", round=2, phase="passed", summary="3 passed in 0.1s"),
               RunFinished(stop_reason=StopReason.DONE, message="done", steps=3, verified=True, tests="3 passed"))
    assert "⧗ verifying: pytest -q\n" in out and "✗ tests fail: 1 failed, 2 passed in 0.1s" in out
    assert "⧗ verifying: pytest -q (after repair 1)" in out and "✓ tests pass: 3 passed in 0.1s" in out
    failed = play(started, RunFinished(stop_reason=StopReason.TESTS_FAILED, verified=False, tests="1 failed",
                                       message="the project's tests fail after the change (1 failed); 2 repair "
                                               "round(s) did not fix them"))
    assert "tests_failed" in failed and "2 repair round(s) did not fix them" in " ".join(failed.split())
    assert "· 3 steps · tests pass ·" in out
    baseline = play(started, Verification(command="pytest -q", round=1, phase="running"),  # before any change
                    Verification(command="pytest -q", round=1, phase="failed", summary="1 failed in 0.1s"))
    assert "⧗ checking what fails before any change: pytest -q" in baseline
    assert "before any change: 1 failed in 0.1s" in baseline and "verifying" not in baseline

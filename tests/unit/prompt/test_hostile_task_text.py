"""One file or one task text never ends the run: a Python file the parser cannot build (thousands of unary minus
signs, thousands of chained `+1`) has no outline and the others keep theirs; a task of a hundred thousand letters
with no space goes through the regexes on the task text in linear time; a claimed value nested past the parser's
depth is no example. Sizes, not timings, are what these tests vary: a quadratic regex on 100,000 letters takes
minutes, so the suite's own time limit is the judge."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.agent.judge import task_examples
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.repo_map import Outline, _task_words, repo_map
from cli_agent.prompt.task_files import named_files


def test_a_file_the_parser_cannot_build_is_skipped_and_the_others_are_mapped(tmp_path: Path) -> None:
    (tmp_path / "minus.py").write_text("x = " + "-" * 6000 + "1\n")  # MemoryError in the parser
    (tmp_path / "plus.py").write_text("x = 1" + "+1" * 5000 + "\n")  # RecursionError
    (tmp_path / "good.py").write_text("def wanted_function(a):\n    return a\n")
    outline = Outline(Workspace(tmp_path))
    assert [s.name for s in outline.symbols()] == ["wanted_function"]
    found = repo_map("fix wanted_function", outline)
    assert found is not None and "wanted_function" in found.text
    assert found.text.endswith("(not outlined, nested too deeply for Python's parser: minus.py, plus.py)")


def test_a_long_word_task_costs_linear_time_in_the_task_regexes(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("def f():\n    pass\n")
    for task in ("a" * 100_000, "a." * 50_000, "a/" * 50_000, "Ab(" * 30_000, "x`" * 50_000):
        _task_words(task)
        named_files(task, Workspace(tmp_path))
        task_examples.examples(task)


def test_a_value_nested_past_the_parser_s_depth_is_no_example() -> None:
    assert task_examples.examples("f(1) == " + "(" * 6000 + "1" + ")" * 6000) == ()
    assert task_examples.examples("f(" + "+1" * 5000 + ") == 2") == ()
    found = task_examples.examples("f(1) should be " + "-" * 6000 + "1")
    assert all(not e.literal for e in found)  # compared as text, never parsed here


@pytest.mark.slow
def test_a_task_of_100000_letters_ends_within_its_timeout(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = " + "-" * 6000 + "1\n")
    (ws / "b.py").write_text("x = 1" + "+1" * 5000 + "\n")
    script = tmp_path / "s.json"
    script.write_text('[{"text": "done"}]')
    for task in ("a" * 100_000, "word " * 2_000_000):  # one long word; ten megabytes of words
        done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", f"scripted:{script}", "--timeout", "10",
                               "-C", str(ws), "-p", "-"], input=task, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "done" in done.stdout and "Traceback" not in done.stderr and "internal error" not in done.stderr


@pytest.mark.parametrize("error", [MemoryError, RecursionError])
def test_a_brief_that_runs_out_of_memory_or_depth_costs_the_brief_not_the_run(tmp_path: Path, error) -> None:
    from agentkit import make_agent, run

    from cli_agent.contracts.events import Warning

    def briefer(workspace, seen):
        def brief(task: str) -> str | None:
            raise error("too deep")
        return brief

    agent, _ = make_agent(tmp_path, [{"text": "answered"}], brief=briefer)
    events, finished = run(agent, "a task")
    assert finished.stop_reason.value == "done" and finished.answer == "answered"
    assert any(isinstance(e, Warning) and e.code == "brief" and error.__name__ in e.message for e in events)


@pytest.mark.slow
def test_an_example_too_big_or_too_deep_to_evaluate_is_skipped_with_a_note(tmp_path: Path) -> None:
    found = (task_examples.Example("len([0] * (10**10))", "1"), task_examples.Example("eval('-' * 100000 + '1')", "1"),
             task_examples.Example("1 + 1", "2"))
    (tmp_path / "check.py").write_text(task_examples.script(found, [], [], ()))
    done = subprocess.run([sys.executable, "check.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    verdicts = task_examples.verdicts(found, done.stdout)
    assert [v.ok for v in verdicts] == [None, None, True]
    assert all("not checked" in v.detail for v in verdicts[:2])


def test_replace_definition_in_a_file_nested_past_the_parser_s_depth_is_a_tool_error(tmp_path: Path) -> None:
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.tools import ToolContext
    from cli_agent.tools.context import SeenFiles
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.tools.registry import Registry

    (tmp_path / "deep.py").write_text("def f():\n    return 1\n\nx = " + "-" * 6000 + "1\n")
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(tmp_path), seen=SeenFiles()))
    d.run(ToolCall(id="r", name="read_file", arguments={"path": "deep.py"}))
    prepared = d.prepare(ToolCall(id="c", name="replace_definition",
                                  arguments={"path": "deep.py", "name": "f", "new": "def f():\n    return 2\n"}))
    assert prepared.error is not None and "nested too deeply" in prepared.error.errors[0]

"""A reasoning model's thinking in the REPL: dimmed while it streams, one folded line once the answer starts, whole
under /expand; never in the answer."""

from __future__ import annotations

from rich.console import Console

from cli_agent.contracts.events import AssistantMessage, ModelRequest, RunStarted, TextDelta, ThinkingDelta
from cli_agent.ui.view.render import Renderer
from cli_agent.ui.view.working import Working

THOUGHT = "The failing test imports parse from a.py, so read a.py first and check the empty-string case."


def test_thinking_folds_to_one_line_when_the_answer_starts_and_is_kept_for_expand():
    console = Console(record=True, width=100, color_system=None)
    renderer = Renderer(console)
    for event in (RunStarted("r1", "task", "m", "native", "/ws"), ModelRequest(1, "fp", 2),
                  *(ThinkingDelta(word + " ") for word in THOUGHT.split()), TextDelta("Fixed "),
                  TextDelta("it."), AssistantMessage("Fixed it.")):
        renderer(event)
    renderer.close()
    shown = console.export_text()
    folded = [line for line in shown.splitlines() if line.startswith("✻ thought:")]
    assert folded == ["✻ thought: The failing test imports parse from a.py, so read a.py first and c… (16 words · "
                      "/expand)"]
    assert "empty-string" not in shown  # the rest waits for /expand
    assert renderer.thoughts == [" ".join(THOUGHT.split()) + " "]
    assert shown.index("✻ thought") < shown.index("Fixed it.")


def test_the_live_region_shows_the_thinking_dimmed_until_the_answer():
    working = Working(lambda: 0.0, list, lambda: "")
    working.thinking = "considering the options"
    console = Console(record=True, width=80, color_system="truecolor")
    console.print(working)
    assert "considering the options" in console.export_text(clear=False)
    assert "\x1b[2;3m" in console.export_text(styles=True)  # dim italic
    working.text = "the answer"
    console = Console(record=True, width=80, color_system=None)
    console.print(working)
    shown = console.export_text()
    assert "considering" not in shown and "the answer" in shown

"""A command's output as the transcript draws it (`ui.command_panel.output_block`): whole lines inside the `│` margin
at any width, what was left out said, carriage returns and padding handled as a terminal would."""

from __future__ import annotations

import pytest
from rich.console import Console

from cli_agent.ui.view.command_panel import output_block, output_lines


def drawn(text: str, width: int, lines: int | None = 12) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    block = output_block(text, lines)
    assert block is not None
    console.print(block)
    return console.export_text().rstrip("\n").split("\n")


@pytest.mark.parametrize("width", [60, 100])
def test_every_screen_line_is_inside_the_margin_and_what_was_left_out_is_said(width):
    text = "".join(f"line {i}\n" for i in range(1, 41)) + "x" * 150 + "\n\n\n"
    shown = drawn(text, width)
    assert shown[0] == "  │ … 29 earlier lines (/expand)"
    assert shown[1] == "  │ line 30"
    assert all(line.startswith("  │ ") and len(line) <= width for line in shown)
    assert "".join(line[4:] for line in shown[12:]) == "x" * 150  # wrapped, nothing cut


@pytest.mark.parametrize("width", [60, 100])
def test_padding_gives_way_before_a_line_wraps(width):
    shown = drawn(".." + " " * 70 + "[100%]\n2 passed\n", width)
    assert shown[0].startswith("  │ ..  ") and shown[0].endswith("[100%]") and len(shown[0]) <= width
    assert shown[1] == "  │ 2 passed"


def test_a_carriage_return_leaves_what_it_rewrote_last():
    assert output_lines("10%\r50%\r100%\ndone\r\n\n") == ["100%", "done"]

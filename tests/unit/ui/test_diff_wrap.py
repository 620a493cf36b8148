"""A change's diff as drawn (`ui.view.change_view.change_body`): a line too long for the screen goes on under its
own `+`/`-`/` ` marker, split between words, so no row of the diff starts at column 0 without its marker."""

from __future__ import annotations

import pytest
from rich.console import Console

from cli_agent.contracts import Change
from cli_agent.ui.view.change_view import change_body

LONG = "result = compute_the_total(first_argument, second_argument, third_argument, fourth_argument, " \
       "fifth_argument, sixth_argument)"


def drawn(change: Change, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(change_body(change))
    return console.export_text().rstrip("\n").split("\n")


@pytest.mark.parametrize("width", [60, 80])
def test_a_long_diff_line_goes_on_under_its_marker_between_words(width):
    kept = b"keep_this_context_line_that_is_long = " + b"x" * 30 + b" and more words " * 5 + b"\n"
    before = b"import os\n\nold = 1\n" + kept
    after = b"import os\n\n" + LONG.encode() + b"\n" + kept
    rows = drawn(Change(tool="edit_file", kind="edit", path="a.py", before=before, after=after), width)
    assert all(len(row) <= width for row in rows)
    body = rows[rows.index(next(r for r in rows if r.startswith("@@"))) + 1:]
    assert all(row[:1] in "+- " for row in body), rows
    added = [row for row in body if row.startswith("+")]
    assert " ".join(row[1:].strip() for row in added) == LONG  # whole, split only between words
    assert len(added) > 1
    removed = [row for row in body if row.startswith("-")]
    assert [row[1:] for row in removed] == ["old = 1"]
    context = [row[1:] for row in body if row.startswith(" ")][2:]  # a context line goes on under its blank marker
    assert len(context) > 1 and " ".join(context).split() == after.decode().splitlines()[-1].split()

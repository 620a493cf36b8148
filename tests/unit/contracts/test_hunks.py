"""The diff of a change looks only at the changed lines, and is still the whole truth: applied to the file before,
it gives the file after; its counts are the diff's +/- lines; a one-line edit of a 20 MB file stays within three
times the file's size in memory (a child process under RLIMIT_AS)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_agent.contracts.change import Change
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files
from cli_agent.tools.handlers.edits import replace_text

_HEADER = re.compile(r"@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")


def patched(before: str, diff: str) -> str:
    """`before` with a unified diff applied, checking every context and removed line against it."""
    old = before.splitlines(keepends=True)
    out: list[str] = []
    at = 0
    rows = diff.splitlines(keepends=True)[2:]
    i = 0
    while i < len(rows):
        m = _HEADER.match(rows[i])
        assert m, rows[i]
        start = int(m.group(1)) - (0 if m.group(2) == "0" else 1)
        out += old[at:start]
        at = start
        i += 1
        while i < len(rows) and not rows[i].startswith("@@"):
            row = rows[i]
            body = row[1:]
            if i + 1 < len(rows) and rows[i + 1].startswith("\\ No newline"):
                body = body.removesuffix("\n")
                i += 1
            if row[0] in " -":
                assert old[at] == body, (old[at], body)
                at += 1
            if row[0] in " +":
                out.append(body)
            i += 1
    return "".join(out + old[at:])


def counts(diff: str) -> tuple[int, int]:
    rows = diff.splitlines()[2:]
    return sum(r.startswith("+") for r in rows), sum(r.startswith("-") for r in rows)


lines = st.lists(st.sampled_from(["a\n", "b\n", "c\n", "\n", "x y\n", "a", "b"]), max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(lines, lines, st.sampled_from(["utf-8", "utf-16", "latin-1"]))
def test_the_diff_of_any_two_texts_turns_one_into_the_other(before: str, after: str, encoding: str) -> None:
    change = Change("write_file", "write", "f.txt", before.encode(encoding), after.encode(encoding),
                    encoding=encoding)
    diff = change.diff()
    assert patched(before, diff) == after
    assert change.stats() == counts(change.diff(context=0))
    # Not always minimal (Hypothesis found 5 changed lines where difflib counts 3): at most every line of both.
    assert sum(change.stats()) <= len(before.splitlines()) + len(after.splitlines())


@settings(max_examples=300, deadline=None)
@given(lines, st.sampled_from(["a", "b\n", "a\nb", "\n", "x"]), st.sampled_from(["", "z", "z\nz\n", "\n", "a\n"]))
def test_the_regions_an_edit_names_cover_all_it_changed(text: str, old: str, new: str) -> None:
    if old not in text or old == new:
        return
    done = replace_text(text, old, new, newline="\n", replace_all=True, path="f")
    change = Change("edit_file", "edit", "f", text.encode(), done.text.encode(), regions=done.regions)
    assert patched(text, change.diff()) == done.text
    assert patched(text, change.diff(context=0)) == done.text


def test_crlf_and_no_final_newline_survive_the_hunks(tmp_path: Path) -> None:
    (tmp_path / "w.txt").write_bytes(b"one\r\ntwo\r\nthree")
    change = files.edit_file(ToolContext(Workspace(tmp_path)), "w.txt", "three", "3")
    assert change.after == b"one\r\ntwo\r\n3"
    assert change.diff().endswith("-three\n\\ No newline at end of file\n+3\n\\ No newline at end of file\n")
    assert change.stats() == (1, 1) and "(+1 -1 lines)" in change.summary


def test_a_replace_all_across_a_file_shows_one_hunk_per_place(tmp_path: Path) -> None:
    body = "".join(f"line {n}\n" for n in range(10_000))
    (tmp_path / "w.txt").write_text(body.replace("line 10\n", "MARK\n").replace("line 9000\n", "MARK\n"))
    change = files.edit_file(ToolContext(Workspace(tmp_path)), "w.txt", "MARK\n", "one\ntwo\n", replace_all=True)
    assert change.diff().count("@@ -") == 2 and change.stats() == (4, 2)
    assert "@@ -8,7 +8,8 @@" in change.diff() and "@@ -8998,7 +8999,8 @@" in change.diff()


@pytest.mark.slow
def test_one_line_of_a_20_mb_file_within_three_times_its_size(tmp_path: Path) -> None:
    line = "x = compute(value, other_value)  # a line of ordinary code\n"
    count = (20 << 20) // len(line)
    (tmp_path / "big.py").write_text(line * (count // 2) + "TARGET = 1\n" + line * (count // 2))
    size = (tmp_path / "big.py").stat().st_size
    script = textwrap.dedent(f"""
        import resource, sys
        from cli_agent.fs.workspace import Workspace
        from cli_agent.tools import ToolContext
        from cli_agent.tools.handlers import files
        from cli_agent.tools.dispatch import _change_result
        ws = Workspace({str(tmp_path)!r})
        ctx = ToolContext(ws)
        files.read_file(ctx, "big.py", 1, 1)  # every module this path uses is loaded before the limit
        vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vm + 3 * {size} + (16 << 20),) * 2)
        change = files.edit_file(ctx, "big.py", "TARGET = 1", "TARGET = 2")
        diff = change.diff()
        ws.apply(change)
        print(change.stats(), _change_result(change)["lines_added"], diff.count("\\n"))
    """)
    # glibc raises its mmap threshold after the first large free, so later 20 MB blocks come from the heap and are
    # kept after they are freed: the address space then counts memory the edit no longer holds, more or less of it
    # from run to run. A fixed threshold hands every large block back when it is freed, so the limit measures what
    # the edit holds at once.
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": str(128 << 10)}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["(1,", "1)", "1", "11"]
    text = (tmp_path / "big.py").read_text()
    assert text.count("TARGET = 2\n") == 1 and len(text) == size

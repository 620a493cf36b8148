"""`search`'s shapes, the same from ripgrep and from the Python scan: case-insensitive matching, the files or the
per-file counts instead of the lines, context lines around each match, and paging through a cut listing."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files

ENGINES = ["auto", "python"]


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("one\nParse_Config()\ntwo\nthree\n")
    (tmp_path / "src" / "b.py").write_text("parse_config = 1\nparse_config()\n")
    (tmp_path / "c.txt").write_text("nothing here\n")
    for n in range(5):
        (tmp_path / f"many{n}.txt").write_text("".join(f"hit {n}.{k}\n" for k in range(4)))
    return tmp_path


def ctx(root: Path, engine: str, cap: int = 200) -> ToolContext:
    return ToolContext(Workspace(root), ToolLimits(search_max_results=cap, search_engine=engine))


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_ignore_case_matches_either_case_for_patterns_and_literals(tree: Path, engine: str) -> None:
    exact = files.search(ctx(tree, engine), "parse_config")
    assert exact["total"] == 2
    for literal in (False, True):
        found = files.search(ctx(tree, engine), "PARSE_CONFIG", ignore_case=True, literal=literal)
        assert [(m["path"], m["line"]) for m in found["matches"]] == [("src/a.py", 2), ("src/b.py", 1),
                                                                       ("src/b.py", 2)]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_files_and_count_modes_list_each_matching_file_once(tree: Path, engine: str) -> None:
    listed = files.search(ctx(tree, engine), "parse_config", ignore_case=True, output_mode="files")
    assert listed["files"] == ["src/a.py", "src/b.py"] and "matches" not in listed and listed["total"] == 3
    counted = files.search(ctx(tree, engine), "parse_config", ignore_case=True, output_mode="count")
    assert counted["files"] == [{"path": "src/a.py", "matches": 1}, {"path": "src/b.py", "matches": 2}]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_context_lines_come_with_each_match(tree: Path, engine: str) -> None:
    found = files.search(ctx(tree, engine), "Parse_Config", context=2)
    (match,) = found["matches"]
    assert match["before"] == ["one"] and match["after"] == ["two", "three"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_cut_listing_says_how_many_and_offset_pages_through_it(tree: Path, engine: str) -> None:
    seen = []
    offset = 0
    while True:
        page = files.search(ctx(tree, engine, cap=6), r"^hit", offset=offset)
        assert page["total"] == 20
        seen += [(m["path"], m["line"]) for m in page["matches"]]
        if not page["truncated"]:
            break
        assert "of 20" in page["notice"] and f"offset={offset + 6}" in page["notice"]
        offset += 6
    assert len(seen) == 20 == len(set(seen)) and seen == sorted(seen)
    first = files.search(ctx(tree, engine, cap=2), "hit", output_mode="files")
    assert first["files"] == ["many0.txt", "many1.txt"] and "offset=2" in first["notice"]
    rest = files.search(ctx(tree, engine, cap=2), "hit", output_mode="files", offset=4)
    assert rest["files"] == ["many4.txt"] and not rest["truncated"]


def test_bad_modes_and_ranges_are_one_line_errors(tree: Path) -> None:
    for kwargs in ({"output_mode": "lines"}, {"context": 11}, {"context": -1}, {"offset": -3}):
        with pytest.raises(ToolError):
            files.search(ctx(tree, "auto"), "x", **kwargs)  # type: ignore[arg-type]

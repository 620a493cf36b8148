"""The seven file tools: results, limits, and errors that tell the model how to recover."""

from __future__ import annotations

import inspect
import os
import stat
import time
from pathlib import Path

import pytest

from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files, handlers


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "main.py").write_text("import os\n\n\ndef main():\n    print('hello')\n    return 0\n")
    (root / "src" / "pkg" / "util.py").write_text("def helper(x):\n    return x + 1\n")
    (root / "README.md").write_text("# Demo\nhello world\n")
    return Workspace(root)


@pytest.fixture
def ctx(ws: Workspace) -> ToolContext:
    return ToolContext(ws)


def error(fn: object, *args: object, **kwargs: object) -> ToolError:
    with pytest.raises(ToolError) as info:
        fn(*args, **kwargs)  # type: ignore[operator]
    return info.value


def test_handlers_have_the_contract_signatures() -> None:
    expected = {
        "list_files": ["ctx", "path", "pattern", "depth"],
        "read_file": ["ctx", "path", "start_line", "end_line"],
        "search": ["ctx", "pattern", "path", "glob", "literal", "ignore_case", "output_mode", "context", "offset"],
        "create_file": ["ctx", "path", "content"],
        "edit_file": ["ctx", "path", "old", "new", "replace_all"],
        "write_file": ["ctx", "path", "content"],
        "delete_file": ["ctx", "path"],
        "replace_lines": ["ctx", "path", "start_line", "end_line", "new"],
        "replace_definition": ["ctx", "path", "name", "new"],
    }
    table = handlers()
    assert set(expected) <= set(table)
    for name, params in expected.items():
        assert list(inspect.signature(table[name]).parameters) == params, name


# -- list_files ----------------------------------------------------------------------------------------------------

def test_list_files(ctx: ToolContext) -> None:
    result = files.list_files(ctx)
    assert result["entries"] == ["README.md", "src/", "src/main.py", "src/pkg/", "src/pkg/util.py"]
    assert result["truncated"] is False
    assert files.list_files(ctx, depth=1)["entries"] == ["README.md", "src/"]
    assert files.list_files(ctx, "src", pattern="*.py")["entries"] == ["src/main.py", "src/pkg/util.py"]
    assert files.list_files(ctx, pattern="pkg/*.py", path="src")["entries"] == ["src/pkg/util.py"]
    assert files.list_files(ctx, pattern="*.rs")["entries"] == []
    assert "nothing matches" in files.list_files(ctx, pattern="*.rs")["notice"]
    small = ToolContext(ctx.workspace, ToolLimits(list_max_entries=2))
    capped = files.list_files(small)
    assert capped["truncated"] is True and len(capped["entries"]) == 2 and "narrow" in capped["notice"]


def test_list_files_errors(ctx: ToolContext) -> None:
    err = error(files.list_files, ctx, "scr")
    assert "does not exist" in err.message and "src" in err.hints["nearest"]
    assert err.hints["files"] == ["README.md", "src/"]
    error(files.list_files, ctx, ".", depth=0)


# -- read_file -----------------------------------------------------------------------------------------------------

def test_read_file_whole_and_ranges(ctx: ToolContext) -> None:
    whole = files.read_file(ctx, "src/main.py")
    assert whole == {"path": "src/main.py", "content": "import os\n\n\ndef main():\n    print('hello')\n    return 0\n",
                     "start_line": 1, "end_line": 6, "total_lines": 6, "truncated": False}
    part = files.read_file(ctx, "src/main.py", start_line=4, end_line=5)
    assert part["content"] == "def main():\n    print('hello')\n" and part["end_line"] == 5
    assert files.read_file(ctx, "./src/../src/main.py", start_line=6)["content"] == "    return 0\n"
    clamped = files.read_file(ctx, "src/main.py", start_line=5, end_line=99)
    assert clamped["end_line"] == 6 and "6 lines" in clamped["notice"]


@pytest.mark.parametrize(("start", "end"), [(0, None), (7, None), (-1, 2), (5, 4)])
def test_read_file_out_of_range_gives_the_valid_range(ctx: ToolContext, start: int, end: int | None) -> None:
    err = error(files.read_file, ctx, "src/main.py", start_line=start, end_line=end)
    assert err.hints["valid_range"] == [1, 6]


def test_read_file_empty_and_unterminated(ctx: ToolContext, ws: Workspace) -> None:
    (ws.root / "empty.txt").write_bytes(b"")
    assert files.read_file(ctx, "empty.txt")["total_lines"] == 0
    assert files.read_file(ctx, "empty.txt")["content"] == ""
    (ws.root / "tail.txt").write_bytes(b"a\nb")
    result = files.read_file(ctx, "tail.txt")
    assert result["content"] == "a\nb" and result["total_lines"] == 2


def test_read_file_cap_says_how_to_read_on(ws: Workspace) -> None:
    (ws.root / "big.txt").write_text("".join(f"line {i:04d}\n" for i in range(1, 1001)))
    ctx = ToolContext(ws, ToolLimits(read_max_bytes=1000))
    first = files.read_file(ctx, "big.txt")
    assert first["truncated"] is True and first["end_line"] == 100 and len(first["content"].encode()) <= 1000
    assert "start_line=101" in first["notice"]
    second = files.read_file(ctx, "big.txt", start_line=101)
    assert second["content"].startswith("line 0101\n")
    (ws.root / "wide.txt").write_text("é" * 5000 + "\n")
    cut = files.read_file(ctx, "wide.txt")
    assert cut["truncated"] is True and len(cut["content"].encode()) <= 1000 and "\ufffd" not in cut["content"]


def test_read_file_binary_is_summarised(ws: Workspace, ctx: ToolContext) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
    (ws.root / "logo.png").write_bytes(png)
    result = files.read_file(ctx, "logo.png")
    assert result["content"] == "" and result["binary"] is True and result["type"] == "PNG image"
    assert result["size"] == len(png)


def test_read_file_missing_suggests_near_paths(ctx: ToolContext) -> None:
    err = error(files.read_file, ctx, "src/mian.py")
    assert err.hints["nearest"][0] == "src/main.py"
    assert err.hints["files"] == ["src/main.py", "src/pkg/"]
    err = error(files.read_file, ctx, "util.py")
    assert "src/pkg/util.py" in err.hints["nearest"]
    err = error(files.read_file, ctx, "src/nope/deeper/x.py")
    assert err.hints["files"] == ["src/main.py", "src/pkg/"]


# -- search --------------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_search_regex_literal_and_glob(ctx: ToolContext, ws: Workspace) -> None:
    result = files.search(ctx, r"hel+o")
    assert [(m["path"], m["line"]) for m in result["matches"]] == [("README.md", 2), ("src/main.py", 5)]
    assert result["matches"][1]["text"] == "    print('hello')"
    assert files.search(ctx, "x + 1", literal=True)["matches"][0] == {"path": "src/pkg/util.py", "line": 2,
                                                                      "text": "    return x + 1"}
    assert files.search(ctx, "x + 1")["count"] == 0  # as a regex, `+` is a quantifier
    assert [m["path"] for m in files.search(ctx, "hello", glob="*.py")["matches"]] == ["src/main.py"]
    assert [m["path"] for m in files.search(ctx, "def", path="src/pkg")["matches"]] == ["src/pkg/util.py"]
    assert files.search(ctx, "def", path="src/main.py")["count"] == 1
    (ws.root / "blob.bin").write_bytes(b"hello\0world")
    assert "blob.bin" not in [m["path"] for m in files.search(ctx, "hello")["matches"]]


def test_search_invalid_regex_names_the_position(ctx: ToolContext) -> None:
    err = error(files.search, ctx, "def (main")
    assert err.hints["position"] == 4 and "position 4" in err.message and "literal=true" in err.message
    error(files.search, ctx, "")


@pytest.mark.slow
def test_search_caps_results(ws: Workspace) -> None:
    (ws.root / "many.txt").write_text("hit\n" * 50)
    ctx = ToolContext(ws, ToolLimits(search_max_results=10))
    for engine in ("auto", "python"):
        ctx = ToolContext(ws, ToolLimits(search_max_results=10, search_engine=engine))
        result = files.search(ctx, "hit")
        assert result["count"] == 10 and result["total"] == 50 and result["truncated"] is True
        assert "showing matching lines 1-10 of 50" in result["notice"]
        assert [m["line"] for m in result["matches"]] == list(range(1, 11))


@pytest.mark.slow
def test_a_walk_that_stops_at_its_entry_cap_says_so_in_listings_and_python_searches(
        ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.fs import walk

    for n in range(30):
        (ws.root / f"f{n:02}.txt").write_text("needle\n")
    assert ws.walk(".").unfinished is None
    monkeypatch.setattr(walk, "MAX_VISITS", 10)
    listed = files.list_files(ToolContext(ws))
    assert listed["truncated"] is True and "stopped after looking at 10 entries" in listed["notice"]
    found = files.search(ToolContext(ws, ToolLimits(search_engine="python")), "needle")
    assert found["truncated"] is True and "only part of the tree was searched" in found["notice"]
    assert found["total"] < 30
    everything = files.search(ToolContext(ws), "needle")  # rg walks the tree itself, with no such cap
    assert everything["engine"] == "ripgrep" and everything["total"] == 30 and not everything["truncated"]


@pytest.mark.slow
def test_catastrophic_regex_is_bounded_by_the_timeout(ws: Workspace) -> None:
    (ws.root / "evil.txt").write_text("a" * 40 + "!\n")
    ctx = ToolContext(ws, ToolLimits(search_timeout_s=0.5, search_engine="python"))
    started = time.monotonic()
    err = error(files.search, ctx, r"(a|aa)+$")
    assert time.monotonic() - started < 30  # only a hang fails here: unbounded, this backtracks for minutes
    assert "evil.txt" in err.message and "backtracking" in err.message
    # ripgrep's engine is linear-time: the same pattern simply does not match
    ctx = ToolContext(ws, ToolLimits(search_timeout_s=0.5))
    assert files.search(ctx, r"(a|aa)+$")["total"] == 0


# -- create_file ---------------------------------------------------------------------------------------------------

def test_create_file_plans_and_writes_nothing(ctx: ToolContext, ws: Workspace) -> None:
    change = files.create_file(ctx, "docs/guide/intro.md", "# Intro\n\ntext\n")
    assert isinstance(change, Change)
    assert (change.kind, change.path, change.before, change.mode) == ("create", "docs/guide/intro.md", None, 0o644)
    assert change.after == b"# Intro\n\ntext\n" and change.summary == "create docs/guide/intro.md (+3 -0 lines)"
    assert not (ws.root / "docs").exists()
    ws.apply(change)
    assert (ws.root / "docs/guide/intro.md").read_text() == "# Intro\n\ntext\n"
    assert stat.S_IMODE((ws.root / "docs/guide/intro.md").stat().st_mode) == 0o644


def test_create_file_refuses_an_existing_file(ctx: ToolContext) -> None:
    err = error(files.create_file, ctx, "README.md", "x")
    assert "already exists" in err.message and "edit_file" in err.message
    error(files.create_file, ctx, "src", "x")
    error(files.create_file, ctx, "README.md/inner.txt", "x")


# -- edit_file -----------------------------------------------------------------------------------------------------

def test_edit_file_replaces_exactly_once(ctx: ToolContext, ws: Workspace) -> None:
    change = files.edit_file(ctx, "src/main.py", "print('hello')", "print('bye')")
    assert change.kind == "edit" and change.before == (ws.root / "src/main.py").read_bytes()
    assert change.summary == "edit src/main.py: 1 replacement at line 5 (+1 -1 lines)"
    assert "print('hello')" in (ws.root / "src/main.py").read_text()  # nothing written yet
    ws.apply(change)
    assert (ws.root / "src/main.py").read_text().count("print('bye')") == 1


def test_edit_file_no_match_shows_the_closest_lines(ctx: ToolContext) -> None:
    err = error(files.edit_file, ctx, "src/main.py", "    print('helo')", "x")
    assert "not found" in err.message
    assert err.hints["closest"][0] == {"line": 5, "text": "    print('hello')"}
    err = error(files.edit_file, ctx, "src/main.py", "def main():\n  print('hello')", "x")
    assert "only in whitespace" in err.message and "lines 4-5" in err.message


def test_edit_file_several_matches_need_replace_all(ctx: ToolContext, ws: Workspace) -> None:
    (ws.root / "dup.txt").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    err = error(files.edit_file, ctx, "dup.txt", "x = 1", "x = 9")
    assert "3 times" in err.message and "lines 1, 3, 4" in err.message and err.hints["lines"] == [1, 3, 4]
    change = files.edit_file(ctx, "dup.txt", "x = 1", "x = 9", replace_all=True)
    assert change.after == b"x = 9\ny = 2\nx = 9\nx = 9\n" and "3 replacements" in change.summary


def test_edit_file_refusals(ctx: ToolContext, ws: Workspace) -> None:
    assert "empty" in error(files.edit_file, ctx, "README.md", "", "x").message
    assert "the same" in error(files.edit_file, ctx, "README.md", "hello", "hello").message
    err = error(files.edit_file, ctx, "READNE.md", "a", "b")
    assert "create_file" in err.message and err.hints["nearest"][0] == "README.md"
    (ws.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0")
    assert "binary" in error(files.edit_file, ctx, "img.png", "PNG", "JPG").message


# -- write_file and delete_file ------------------------------------------------------------------------------------

def test_write_file_replaces_an_existing_file_only(ctx: ToolContext, ws: Workspace) -> None:
    change = files.write_file(ctx, "README.md", "# New\n")
    assert (change.kind, change.before, change.after) == ("write", b"# Demo\nhello world\n", b"# New\n")
    ws.apply(change)
    assert (ws.root / "README.md").read_text() == "# New\n"
    err = error(files.write_file, ctx, "NEW.md", "x")
    assert "does not exist" in err.message and "create_file" in err.message
    assert "exactly this content" in error(files.write_file, ctx, "README.md", "# New\n").message


def test_delete_file(ctx: ToolContext, ws: Workspace) -> None:
    change = files.delete_file(ctx, "src/pkg/util.py")
    assert (change.kind, change.after, change.mode) == ("delete", None, 0o644)
    assert change.summary == "delete src/pkg/util.py (+0 -2 lines)"
    assert (ws.root / "src/pkg/util.py").exists()
    ws.apply(change)
    assert not (ws.root / "src/pkg/util.py").exists() and (ws.root / "src/pkg").is_dir()
    err = error(files.delete_file, ctx, "src/pkg/util.py")
    assert "does not exist" in err.message
    assert "folder" in error(files.delete_file, ctx, "src").message


def test_mutating_tools_refuse_protected_and_locked_paths_at_planning(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "vendor").mkdir()
    (root / "vendor" / "lib.py").write_text("x = 1\n")
    ctx = ToolContext(Workspace(root, locks=("vendor/**",)))
    for call in (lambda: files.edit_file(ctx, ".git/HEAD", "main", "evil"),
                 lambda: files.write_file(ctx, ".git/HEAD", "x"),
                 lambda: files.delete_file(ctx, ".git/HEAD"),
                 lambda: files.create_file(ctx, ".git/new", "x")):
        assert "protected" in error(call).message
    for call in (lambda: files.edit_file(ctx, "vendor/lib.py", "1", "2"),
                 lambda: files.create_file(ctx, "vendor/new.py", "x")):
        assert "locked" in error(call).message
    assert os.listdir(root / ".git") == ["HEAD"]


def test_read_file_of_a_file_with_nul_bytes_past_the_start_is_binary(ws: Workspace, ctx: ToolContext) -> None:
    with open(ws.root / "sparse.log", "wb") as fh:
        fh.write(b"first line\n" * 10)
        fh.truncate(files.FILE_MAX + (1 << 20))
    result = files.read_file(ctx, "sparse.log")
    assert result["binary"] is True and result["content"] == "" and result["size"] == files.FILE_MAX + (1 << 20)

"""`search` against ripgrep itself: on a generated tree (`.gitignore` files, hidden files, `.git`, binaries, CRLF, no
final newline, a file over the old 4 MB limit, links in and out), both engines find exactly the lines `rg` finds,
count every match past the cap, and list what they skipped."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path

import pytest

from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files, ripgrep

RG = ripgrep.rg_binary()
pytestmark = pytest.mark.skipif(RG is None, reason="rg is installed with the package; this machine has none")
ENGINES = ["auto", "python"]


@pytest.fixture(scope="module")
def tree(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree") / "ws"
    outside = root.parent / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("needle outside the workspace\n")
    rnd = random.Random(17)
    words = ["alpha", "beta", "needle", "gamma", "delta", "needles", "NEEDLE", "haystack"]
    for d in range(12):
        folder = root / f"pkg{d}" / ("sub" if d % 3 == 0 else "")
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(20):
            lines = [" ".join(rnd.choice(words) for _ in range(rnd.randint(1, 8))) for _ in range(rnd.randint(0, 60))]
            (folder / f"mod{f}.py").write_text("\n".join(lines) + ("\n" if f % 4 else ""))
    (root / ".gitignore").write_text("*.log\nbuild/\n!keep.log\n# a comment\n")
    (root / "pkg1" / ".gitignore").write_text("mod1*.py\n/mod2.py\n")
    for name in ("a.log", "keep.log", "build/out.txt", ".hidden/h.txt", ".git/config", ".env"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("needle in " + name + "\n")
    (root / "crlf.txt").write_bytes(b"one needle\r\ntwo\r\nthree needle\r\n")
    (root / "bin.dat").write_bytes(b"needle\0\1\2\3")
    (root / "latin.txt").write_bytes("caf\xe9 needle\n".encode("latin-1"))
    with open(root / "big.txt", "w") as fh:  # 6 MB: larger than the old limit, still one Python pass
        line = "filler text " * 8 + "\n"
        fh.write(line * (6_000_000 // len(line)))
        fh.write("the last needle\n")
    os.symlink(outside, root / "out_dir")
    os.symlink(outside / "secret.txt", root / "out_file.txt")
    os.symlink("crlf.txt", root / "link_in.txt")
    return root


def rg_lines(root: Path, pattern: str, *extra: str, path: str = ".") -> list[tuple[str, int]]:
    """What a user running rg by hand gets: hidden files, .gitignore without a .git, .git skipped (and `$` before
    `\\r\\n`, as the tool shows CRLF files with LF endings)."""
    assert RG is not None
    out = subprocess.run([RG, "--no-config", "--crlf", "-n", "--no-heading", "--with-filename", "--null", "--hidden",
                          "--no-require-git", "-g", "!.git", *extra, "-e", pattern, "--", path],
                         cwd=root, capture_output=True, check=False)
    assert out.returncode in (0, 1), out.stderr
    found = []
    for row in out.stdout.decode("utf-8", "replace").splitlines():
        name, _, rest = row.partition("\0")
        found.append((name.removeprefix("./"), int(rest.split(":", 1)[0])))
    return sorted(found)


def ours(root: Path, engine: str, pattern: str, **kw: object) -> dict:
    ctx = ToolContext(Workspace(root), ToolLimits(search_max_results=100_000, search_engine=engine))
    return files.search(ctx, pattern, **kw)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("pattern", ["needle", "^needle", "needle$", r"\bneedles?\b", "(?i)needle", "e{2}d",
                                     "gamma delta"])
def test_both_engines_find_what_rg_finds(tree: Path, engine: str, pattern: str) -> None:
    result = ours(tree, engine, pattern)
    assert sorted((m["path"], m["line"]) for m in result["matches"]) == rg_lines(tree, pattern)
    assert result["total"] == result["count"] and not result["truncated"]
    paths = {m["path"] for m in result["matches"]}
    if pattern == "needle":
        assert {"big.txt", "keep.log", ".env", "crlf.txt", "latin.txt", ".hidden/h.txt"} <= paths
    assert not paths & {"a.log", "build/out.txt", ".git/config", "bin.dat", "out_file.txt", "link_in.txt"}
    assert not any(p.startswith("out_dir/") or p.startswith("pkg1/mod1") for p in paths)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_glob_and_path_follow_the_tools_rules(tree: Path, engine: str) -> None:
    got = ours(tree, engine, "needle", glob="*.py")  # a filter: ignored files stay ignored (rg's -g would add them)
    want = rg_lines(tree, "needle", "--type-add", "sel:*.py", "-t", "sel")
    assert sorted((m["path"], m["line"]) for m in got["matches"]) == want
    assert want and all(p.endswith(".py") for p, _ in want) and not any(p.startswith("pkg1/mod1") for p, _ in want)
    got = ours(tree, engine, "needle", path="pkg1")  # the root's .gitignore and pkg1's apply below pkg1
    assert sorted((m["path"], m["line"]) for m in got["matches"]) == rg_lines(tree, "needle", path="pkg1")
    got = ours(tree, engine, "needle", path="pkg0", glob="sub/*.py")  # an anchored glob is relative to path
    want = [hit for hit in rg_lines(tree, "needle", path="pkg0") if hit[0].startswith("pkg0/sub/")]
    assert sorted((m["path"], m["line"]) for m in got["matches"]) == want and want
    got = ours(tree, engine, "needle", path="crlf.txt")
    assert [(m["line"], m["text"]) for m in got["matches"]] == [(1, "one needle"), (3, "three needle")]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_the_cap_counts_every_match_and_says_so(tree: Path, engine: str) -> None:
    want = rg_lines(tree, "needle")
    ctx = ToolContext(Workspace(tree), ToolLimits(search_max_results=20, search_engine=engine))
    result = files.search(ctx, "needle")
    assert result["total"] == len(want) > 20 and result["count"] == 20 and result["truncated"]
    assert [(m["path"], m["line"]) for m in result["matches"]] == want[:20]  # the first ones, by path and line
    assert result["files_with_matches"] == len({p for p, _ in want})
    assert f"showing matching lines 1-20 of {len(want)}" in result["notice"] and "offset=20" in result["notice"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_skipped_files_are_listed_with_the_reason(tree: Path, engine: str) -> None:
    result = ours(tree, engine, "needle")
    assert [s["path"] for s in result["skipped"]] == ["bin.dat"]
    assert "binary" in result["skipped"][0]["reason"]


@pytest.mark.slow
def test_python_only_patterns_use_the_python_engine(tree: Path) -> None:
    result = ours(tree, "auto", r"(?<=the last )needle")  # look-behind: rg (no PCRE2) can't
    assert result["engine"] == "python" and [m["path"] for m in result["matches"]] == ["big.txt"]
    result = ours(tree, "auto", r"[a&&b]|needle")  # a set operation in rg, a literal '&' in Python
    assert result["engine"] == "python"
    assert ours(tree, "auto", "needle")["engine"] == "ripgrep"


def test_a_deadline_already_past_searches_nothing_and_says_so(tree: Path) -> None:
    for engine in ENGINES:
        ctx = ToolContext(Workspace(tree), ToolLimits(search_engine=engine), deadline=time.monotonic() - 1)
        result = files.search(ctx, "needle")
        assert result["truncated"] and "time limit" in result["notice"]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_a_file_larger_than_a_python_block_is_searched_streamed(tmp_path: Path, engine: str) -> None:
    line = b"0123456789 abcdefghij " * 4 + b"\n"
    with open(tmp_path / "huge.txt", "wb") as fh:
        fh.write(b"needle first\n")
        fh.write(line * ((70 << 20) // len(line)))
        fh.write(b"needle last\n")
    result = ours(tmp_path, engine, "needle")
    total = 2 + (70 << 20) // len(line)
    assert [(m["line"], m["text"]) for m in result["matches"]] == [(1, "needle first"), (total, "needle last")]


@pytest.mark.slow
@pytest.mark.parametrize("engine", ENGINES)
def test_names_and_lines_that_look_like_rgs_json_are_read_as_data(tmp_path: Path, engine: str) -> None:
    """rg's messages are partly read without decoding them (`ripgrep._read_messages`): names that JSON escapes or
    can't hold as text, and lines that spell rg's own keys, past the cap and before it, come out as rg says."""
    root = tmp_path / "ws"
    root.mkdir()
    tricky = ['quote".txt', "back\\slash.txt", "tab\tname.txt", "ünï.txt", "plain.txt"]
    for n, name in enumerate(tricky):
        (root / name).write_text(f'needle "line_number":{900 + n},"binary_offset":null\n' * 3)
    os.mkdir(root / "raw")
    with open(os.path.join(os.fsencode(root / "raw"), b"caf\xe9.txt"), "wb") as fh:
        fh.write(b'{"type":"end","data":{"binary_offset":null}} needle\n')
    want = rg_lines(root, "needle")
    for cap in (4, 100):
        ctx = ToolContext(Workspace(root), ToolLimits(search_max_results=cap, search_engine=engine))
        result = files.search(ctx, "needle")
        assert result["total"] == len(want) == 16 and result["files_with_matches"] == 6
        shown = sorted((m["path"].encode("utf-8", "surrogateescape").decode("utf-8", "replace"), m["line"])
                       for m in result["matches"])  # as rg_lines shows names
        assert shown == sorted(want)[:cap]
        assert all(m["text"].startswith(("needle", '{"type"')) for m in result["matches"])

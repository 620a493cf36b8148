"""Adversarial search: a pattern (or glob) is data, never a flag or a shell word; a catastrophic regex is cut off by
the time limit (Python engine) or runs in linear time (ripgrep); large files are searched, binary ones are listed as
skipped with the reason."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files

FLAGS = ["--pre=x", "--pre=sh", "-f/etc/passwd", "-f", "/etc/passwd", "-e", "--", "--help", "-r", "--files",
         "-uuu", "--no-ignore", "-L", "--follow", "-z", "--search-zip", "$(touch pwned)", "`touch pwned`",
         "; touch pwned", "| touch pwned", "&& touch pwned", "\ntouch pwned", "--exec=touch pwned", "-P", "--glob=*"]


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "ws").mkdir()
    lines = [f"literal {flag} here" for flag in FLAGS] + ["root:x:0:0 lookalike? no: ordinary text"]
    (tmp_path / "ws" / "flags.txt").write_text("\n".join(lines) + "\n")
    (tmp_path / "ws" / "-rf").write_text("a file named like a flag\n")
    return ToolContext(Workspace(tmp_path / "ws"), ToolLimits(search_timeout_s=0.5))


@pytest.mark.slow
def test_a_pattern_is_data_never_a_flag(ctx: ToolContext, tmp_path: Path) -> None:
    passwd = Path("/etc/passwd").read_text(errors="replace").splitlines()[:1] if Path("/etc/passwd").exists() else []
    for flag in FLAGS:
        result = files.search(ctx, flag, literal=True)
        texts = [m["text"] for m in result["matches"]]
        assert all(flag in t for t in texts) and (f"literal {flag} here" in texts or "\n" in flag), (flag, result)
        for line in passwd:
            assert line not in str(result)
    for flag in ("--pre=x", "-f/etc/passwd", "--help"):  # as a regular expression too: it matches itself
        result = files.search(ctx, flag)
        assert [m["line"] for m in result["matches"]] == [FLAGS.index(flag) + 1]
    for glob in ("-rf", "--pre=x", "-f/etc/passwd", "../*", "/etc/*"):
        result = files.search(ctx, "a file", glob=glob)
        assert all(m["path"] in ("-rf",) for m in result["matches"]), (glob, result)
    assert [p.name for p in (tmp_path / "ws").iterdir() if "pwned" in p.name] == []
    assert not (tmp_path / "pwned").exists() and not Path("pwned").exists()
    with pytest.raises(ToolError, match=r"outside the workspace|climbs out"):
        files.search(ctx, "root", path="/etc")


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["auto", "python"])
@pytest.mark.parametrize("pattern", ["(a+)+$", "(a|aa)+$", "(a*)*b", "(x+x+)+y", "^(\\w+\\s?)*$"])
def test_a_catastrophic_regex_is_cut_off_by_the_time_limit(ctx: ToolContext, pattern: str, engine: str) -> None:
    ctx = ToolContext(ctx.workspace, ToolLimits(search_timeout_s=0.5, search_engine=engine))
    root = ctx.workspace.root
    (root / "long.txt").write_text("a" * 30_000 + "!\n" + "x" * 30_000 + "\n" + "word " * 10_000 + "!\n")
    started = time.monotonic()
    try:
        result = files.search(ctx, pattern)
    except ToolError as exc:
        assert "took more than 0.5 s" in exc.message and "catastrophic" in exc.message
    else:  # no line was catastrophic for this engine: it finished within the limit anyway
        assert result["truncated"] is False or "stopped" in result.get("notice", "")  # at its time limit
    assert time.monotonic() - started < 15


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_binary_files_holding_the_pattern_are_listed_as_skipped(ctx: ToolContext, engine: str) -> None:
    ctx = ToolContext(ctx.workspace, ToolLimits(search_engine=engine))
    root = ctx.workspace.root
    with open(root / "huge.log", "wb") as fh:
        fh.write(b"needle in a haystack\n")
        fh.truncate(70 << 20)  # NUL bytes after the first line: a binary file, larger than one Python block
    (root / "small.txt").write_text("needle\n")
    (root / "other.bin").write_bytes(b"\0\1\2 no pattern here")
    result = files.search(ctx, "needle")
    assert [m["path"] for m in result["matches"]] == ["small.txt"]
    assert [s["path"] for s in result["skipped"]] == ["huge.log"] and result["skipped_total"] == 1
    assert "binary file" in result["skipped"][0]["reason"] and "not searched" in result["notice"]


def test_one_deadline_for_the_whole_search(ctx: ToolContext) -> None:
    ctx = ToolContext(ctx.workspace, ToolLimits(search_timeout_s=0.5, search_engine="python"))
    root = ctx.workspace.root
    for n in range(300):
        (root / f"f{n:03}.txt").write_text(("b" * 2000 + "\n") * 50)
    started = time.monotonic()
    try:
        result = files.search(ctx, "(b|bb)+c")
    except ToolError as exc:
        assert "took more than" in exc.message
    else:
        assert result["truncated"] and "stopped at its time limit (0.5 s)" in result["notice"]
    assert time.monotonic() - started < 15

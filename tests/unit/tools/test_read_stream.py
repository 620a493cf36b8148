"""read_file on large files: read in blocks, any line reachable, exact line counts, CRLF, no final newline, mixed
encodings and binaries handled, and memory bounded by the page (a child process under RLIMIT_AS)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files


def numbered(n: int, ending: str = "\n") -> str:
    return "".join(f"line {k} of the file{ending}" for k in range(1, n + 1))


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(Workspace(tmp_path), ToolLimits(read_max_bytes=4096))


def big(tmp_path: Path, name: str, body: bytes, size: int = files.STREAM_FROM + 1) -> int:
    """`body` repeated past the streaming threshold; the number of copies."""
    copies = size // len(body) + 1
    (tmp_path / name).write_bytes(body * copies)
    return copies


def test_lines_anywhere_in_a_large_file_with_exact_counts(tmp_path: Path, ctx: ToolContext) -> None:
    body = numbered(1000).encode()
    copies = big(tmp_path, "big.txt", body)
    total = 1000 * copies
    head = files.read_file(ctx, "big.txt", 1, 3)
    assert head["content"] == "line 1 of the file\nline 2 of the file\nline 3 of the file\n"
    assert head["total_lines"] == total and head["end_line"] == 3 and not head["truncated"]
    tail = files.read_file(ctx, "big.txt", total - 1)
    assert tail["content"] == "line 999 of the file\nline 1000 of the file\n" and tail["end_line"] == total
    page = files.read_file(ctx, "big.txt", 5000)
    assert page["truncated"] and page["content"].startswith("line 1000 of the file\n")
    assert f"start_line={page['end_line'] + 1}" in page["notice"] and len(page["content"].encode()) <= 4096
    with pytest.raises(ToolError, match=f"has {total} lines"):
        files.read_file(ctx, "big.txt", total + 1)


def test_crlf_no_final_newline_and_a_line_longer_than_the_page(tmp_path: Path, ctx: ToolContext) -> None:
    copies = big(tmp_path, "crlf.txt", numbered(100, "\r\n").encode())
    with open(tmp_path / "crlf.txt", "ab") as fh:
        fh.write(b"the last line, without an ending")
    total = 100 * copies + 1
    result = files.read_file(ctx, "crlf.txt", total - 1)
    assert result["content"] == "line 100 of the file\nthe last line, without an ending"
    assert result["total_lines"] == total and "CRLF" in result["notice"]
    (tmp_path / "one.txt").write_bytes(b"x" * (files.STREAM_FROM + 10) + "é".encode() * 3000 + b"\nnext\n")
    result = files.read_file(ctx, "one.txt")
    assert result["total_lines"] == 2 and result["content"] == "x" * 4096 and "was cut" in result["notice"]
    assert files.read_file(ctx, "one.txt", 2)["content"] == "next\n"


def test_mixed_encodings_are_shown_and_said_binaries_refused(tmp_path: Path, ctx: ToolContext) -> None:
    copies = big(tmp_path, "mixed.txt", numbered(100).encode())
    with open(tmp_path / "mixed.txt", "ab") as fh:
        fh.write("café in Latin-1\n".encode("latin-1"))
    result = files.read_file(ctx, "mixed.txt", 100 * copies + 1)
    assert result["content"] == "café in Latin-1\n" and "mixes encodings" in result["notice"]
    big(tmp_path, "late.bin", numbered(100).encode())
    with open(tmp_path / "late.bin", "ab") as fh:
        fh.write(b"\0\1\2")
    result = files.read_file(ctx, "late.bin")
    assert result["binary"] is True and result["content"] == ""
    (tmp_path / "wide.txt").write_bytes(numbered(10).encode("utf-16") * (files.STREAM_FROM // 300))
    with pytest.raises(ToolError, match="convert it to UTF-8"):
        files.read_file(ctx, "wide.txt")


@pytest.mark.slow
def test_50_mb_round_trip_read_then_edit(tmp_path: Path) -> None:
    ctx = ToolContext(Workspace(tmp_path))
    lines = 50_000_000 // 25
    (tmp_path / "fifty.txt").write_text("".join(f"row {k:>12} data\n" for k in range(1, lines + 1)))
    middle = files.read_file(ctx, "fifty.txt", lines // 2, lines // 2)
    assert middle["content"] == f"row {lines // 2:>12} data\n" and middle["total_lines"] == lines
    with pytest.raises(ToolError, match="handles files up to"):
        files.edit_file(ctx, "fifty.txt", "a", "b")  # the mutating tools keep their limit


@pytest.mark.slow
def test_memory_stays_bounded_on_one_huge_line(tmp_path: Path) -> None:
    size = 300 << 20  # one line of 300 MB, then a short one
    with open(tmp_path / "huge.txt", "wb") as fh:
        block = b"y" * (1 << 20)
        for _ in range(size >> 20):
            fh.write(block)
        fh.write(b"\nend\n")
    script = textwrap.dedent(f"""
        import resource
        from cli_agent.fs.workspace import Workspace
        from cli_agent.tools import ToolContext
        from cli_agent.tools.handlers import files
        ctx = ToolContext(Workspace({str(tmp_path)!r}))
        (Workspace({str(tmp_path)!r}).root / "small.txt").write_text("a\\n")
        files.read_file(ctx, "small.txt")
        vm = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20),) * 2)
        first = files.read_file(ctx, "huge.txt")
        last = files.read_file(ctx, "huge.txt", 2)
        print(first["total_lines"], len(first["content"]), first["truncated"], repr(last["content"]))
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["2", str(256 * 1024), "True", "'end\\n'"]

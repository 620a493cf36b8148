"""Adversarial special files: a FIFO (no hang), /dev/zero through a link and as a device node inside, a 2 GB sparse
file (read in pages, memory bounded), a binary file."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from pathlib import Path
from typing import Any

import pytest

from cli_agent.contracts.envelope import Envelope
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.registry import Registry

ALL: tuple[tuple[str, dict[str, str]], ...] = (
    ("read_file", {}), ("list_files", {}), ("search", {"pattern": "x"}), ("edit_file", {"old": "a", "new": "b"}),
    ("write_file", {"content": "x"}), ("create_file", {"content": "x"}), ("delete_file", {}))


def within(seconds: float, work: Any) -> Any:
    """`work()` in a daemon thread; fails the test (instead of hanging it) if it takes longer."""
    box: list[Any] = []
    thread = threading.Thread(target=lambda: box.append(work()), daemon=True)
    thread.start()
    thread.join(seconds)
    assert not thread.is_alive(), f"still running after {seconds} s: it hangs"
    return box[0]


def every_tool(root: Path, path: str) -> dict[str, Envelope]:
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root)))
    out = {}
    for tool, extra in ALL:
        args = {"path": path, **extra}
        out[tool] = d.execute(d.prepare(ToolCall("c", tool, args, json.dumps(args))))
    return out


@pytest.mark.slow
def test_a_fifo_never_hangs_and_is_never_opened(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "via").symlink_to("pipe")
    (tmp_path / "ok.txt").write_text("x marks\n")
    for path in ("pipe", "via"):
        results = within(30, lambda p=path: every_tool(tmp_path, p))
        assert not results["read_file"].ok and "FIFO" in results["read_file"].errors[0]
        assert not any(results[t].ok for t in ("edit_file", "write_file", "create_file", "delete_file"))
    found = within(30, lambda: every_tool(tmp_path, ".")["search"])
    assert found.ok and [m["path"] for m in found.data["matches"]] == ["ok.txt"]
    assert (tmp_path / "pipe").is_fifo()


def test_dev_zero_through_a_link_and_as_a_device_node_inside(tmp_path: Path) -> None:
    (tmp_path / "zero").symlink_to("/dev/zero")
    (tmp_path / "null").symlink_to("/dev/null")
    for path in ("zero", "null"):
        results = within(30, lambda p=path: every_tool(tmp_path, p))
        assert not any(r.ok for t, r in results.items() if t != "list_files"), results
    try:
        os.mknod(tmp_path / "zdev", 0o600 | 0o020000, os.makedev(1, 5))  # a character device, like /dev/zero
    except PermissionError:
        return  # not root: no device node can be made here, the links above are the case
    results = within(30, lambda: every_tool(tmp_path, "zdev"))
    assert "character device" in results["read_file"].errors[0]
    assert not any(r.ok for t, r in results.items() if t not in ("list_files", "search"))
    assert (tmp_path / "zdev").is_char_device()


_SPARSE = textwrap.dedent("""
    import json, os, sys
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.tools.registry import Registry
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools import ToolContext
    root = sys.argv[1]
    with open(os.path.join(root, "sparse.log"), "wb") as fh:
        fh.write(b"first line\\n" * 1000)
        fh.truncate(2 << 30)  # 2 GiB, almost all a hole
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root)))
    out = {}
    for tool, args in (("read_file", {"path": "sparse.log"}), ("read_file", {"path": "sparse.log", "start_line": 2}),
                       ("search", {"pattern": "first"}), ("edit_file", {"path": "sparse.log", "old": "first",
                                                                        "new": "1st"}),
                       ("delete_file", {"path": "sparse.log"}), ("list_files", {})):
        env = d.execute(d.prepare(ToolCall("c", tool, args, json.dumps(args))))
        out[tool + str(len(out))] = {"ok": env.ok, "errors": env.errors, "data": env.data if tool != "list_files"
                                     else None}
    # this process's own high-water mark: ru_maxrss starts at the parent's peak (a vfork child inherits it at exec)
    with open("/proc/self/status") as status:
        out["peak_mb"] = next(int(l.split()[1]) for l in status if l.startswith("VmHWM:")) / 1024
    print(json.dumps(out))
""")


@pytest.mark.slow
def test_a_2gb_sparse_file_is_paged_with_bounded_memory(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", _SPARSE, str(tmp_path)], capture_output=True, text=True,
                          timeout=240)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    read = out["read_file0"]  # NUL bytes after the text: binary, as a small file would be; never 2 GB in memory
    assert read["ok"] and read["data"]["binary"] and read["data"]["content"] == ""
    assert out["read_file1"]["ok"] and out["read_file1"]["data"]["binary"]
    search = out["search2"]  # the pattern is in it, so it is listed as skipped, with the reason
    assert search["ok"] and search["data"]["matches"] == [] and search["data"]["skipped_total"] == 1
    assert search["data"]["skipped"][0]["path"] == "sparse.log" and "binary" in search["data"]["skipped"][0]["reason"]
    assert not out["edit_file3"]["ok"] and "up to" in out["edit_file3"]["errors"][0]
    assert not out["delete_file4"]["ok"]
    assert (tmp_path / "sparse.log").stat().st_size == 2 << 30
    assert out["peak_mb"] < 400, out["peak_mb"]
    print(f"FIGURE 2 GiB sparse file: peak RSS {out['peak_mb']:.0f} MB")


@pytest.mark.slow
def test_a_binary_file_is_summarised_refused_for_edits_and_deleted_whole(tmp_path: Path) -> None:
    png = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 64
    (tmp_path / "img.png").write_bytes(png)
    results = every_tool(tmp_path, "img.png")
    read = results["read_file"]
    assert read.ok and read.data["binary"] and read.data["type"] == "PNG image" and read.data["content"] == ""
    assert not results["edit_file"].ok and "binary" in results["edit_file"].errors[0]
    assert not results["write_file"].ok and "binary" in results["write_file"].errors[0]
    assert results["delete_file"].ok and not (tmp_path / "img.png").exists()
    (tmp_path / "img.png").write_bytes(png)
    (tmp_path / "x.txt").write_text("x\n")
    found = every_tool(tmp_path, ".")["search"]
    assert [m["path"] for m in found.data["matches"]] == ["x.txt"] and found.data["skipped_total"] == 1
    assert found.data["skipped"][0]["path"] == "img.png" and "binary" in found.data["skipped"][0]["reason"]


@pytest.mark.slow
@pytest.mark.parametrize("size_mb", [40])
def test_a_text_file_larger_than_the_tools_handle_is_refused_not_truncated(tmp_path: Path, size_mb: int) -> None:
    line = b"0123456789abcdef" * 4 + b"\n"
    (tmp_path / "big.txt").write_bytes(line * (size_mb * (1 << 20) // len(line)))
    size = (tmp_path / "big.txt").stat().st_size
    results = every_tool(tmp_path, "big.txt")  # read in pages, with the exact line count; never changed
    assert results["read_file"].ok and "showing lines 1-" in results["read_file"].data["notice"]
    assert results["read_file"].data["truncated"] and results["read_file"].data["total_lines"] == size // len(line)
    for tool in ("edit_file", "write_file"):
        assert not results[tool].ok and "handles files up to" in results[tool].errors[0]
    assert (tmp_path / "big.txt").stat().st_size == size


@pytest.mark.slow
def test_a_large_file_with_nul_bytes_after_its_text_is_binary(tmp_path: Path) -> None:
    with open(tmp_path / "sparse.log", "wb") as fh:
        fh.write(b"first line\n" * 10)
        fh.truncate(40 << 20)
    read = every_tool(tmp_path, "sparse.log")["read_file"]  # NUL bytes after the text: binary, as when small
    assert read.ok and read.data["binary"] and read.data["content"] == "" and read.data["size"] == 40 << 20

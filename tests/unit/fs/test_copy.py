"""A copy never contains itself and is bounded in files and bytes; FIFOs and devices are left out with a note."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_agent.fs.copy import CopyLimits, CopyTooBig, copy_tree


def test_a_folder_holding_the_destination_is_copied_without_it(tmp_path: Path) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "a.py").write_text("a\n")
    os.mkfifo(tmp_path / "src" / "pipe")
    (tmp_path / "src" / "link").symlink_to("pkg/a.py")
    dst = tmp_path / "src" / "tmp" / "copy"
    (tmp_path / "src" / "tmp").mkdir()
    copied = copy_tree(tmp_path / "src", dst)
    assert sorted(p.name for p in dst.iterdir()) == ["link", "pkg", "tmp"]
    assert not (dst / "tmp" / "copy").exists() and (dst / "pkg" / "a.py").read_text() == "a\n"
    assert os.readlink(dst / "link") == "pkg/a.py"
    assert any("pipe is a FIFO" in n for n in copied.notes) and any("tmp/copy/" in n for n in copied.notes)


def test_a_copy_stops_past_its_files_or_bytes(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    for i in range(30):
        (tmp_path / "src" / f"f{i}").write_bytes(b"x" * 100)
    with pytest.raises(CopyTooBig, match="over 10 files"):
        copy_tree(tmp_path / "src", tmp_path / "a", limits=CopyLimits(max_files=10))
    with pytest.raises(CopyTooBig):
        copy_tree(tmp_path / "src", tmp_path / "b", limits=CopyLimits(max_bytes=1000))
    assert copy_tree(tmp_path / "src", tmp_path / "c", limits=CopyLimits(max_files=30, max_bytes=3000)).files == 30


def test_replay_of_a_trace_naming_a_folder_that_holds_the_temp_folder_copies_it_once(tmp_path: Path,
                                                                                     monkeypatch) -> None:
    from cli_agent.replay.rewind import copy_workspace

    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "a.txt").write_text("a\n")
    tmp = tmp_path / "project" / "temp"
    tmp.mkdir()
    copy = copy_workspace(tmp_path / "project", tmp)
    assert sorted(p.name for p in copy.iterdir()) == ["a.txt", "temp"]
    assert list((copy / "temp").iterdir()) == []

"""The one opener for host files: a FIFO, /dev/zero, a folder or a socket reached directly or through a link is
refused at once with one line, a file past its bound is refused or cut, and `follow=False` refuses a final link."""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_agent.fs.hostfile import HostFileError, RegularFile, read_regular, read_regular_or_none
from cli_agent.validated.reader import read_toml


@pytest.fixture
def specials(tmp_path: Path) -> Iterator[dict[str, Path]]:
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "dir").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(tmp_path / "sock"))
    out = {"FIFO": tmp_path / "fifo", "character device": Path("/dev/zero"), "folder": tmp_path / "dir",
           "socket": tmp_path / "sock"}
    for name, target in list(out.items()):
        link = tmp_path / f"link-{name.replace(' ', '-')}"
        link.symlink_to(target)
        out[f"link {name}"] = link
    with sock:
        yield out


def test_what_is_no_regular_file_is_refused_with_what_it_is(specials: dict[str, Path]) -> None:
    for name, path in specials.items():
        with pytest.raises(HostFileError) as caught:
            read_regular(path, 1 << 20)
        kind = name.removeprefix("link ")
        assert f"it is a {kind}, not a regular file; refused" in str(caught.value), name
        assert "\n" not in str(caught.value)
        assert read_regular_or_none(path, 1 << 20) is None


def test_a_bound_refuses_or_cuts_and_a_final_link_can_be_refused(tmp_path: Path) -> None:
    (tmp_path / "big").write_bytes(b"x" * 5000)
    assert read_regular(tmp_path / "big", 5000) == b"x" * 5000
    with pytest.raises(HostFileError, match="larger than 4,096 bytes"):
        read_regular(tmp_path / "big", 4096)
    assert read_regular(tmp_path / "big", 4096, cut=True) == b"x" * 4096
    (tmp_path / "link").symlink_to(tmp_path / "big")
    assert read_regular(tmp_path / "link", 5000) == b"x" * 5000
    with pytest.raises(HostFileError, match="symbolic link"):
        read_regular(tmp_path / "link", 5000, follow=False)
    with pytest.raises(HostFileError) as caught:
        read_regular(tmp_path / "absent", 10)
    assert caught.value.errno == 2


def test_a_toml_file_read_through_the_opener_names_the_problem(specials: dict[str, Path]) -> None:
    class Broken(Exception):
        pass

    for path in (specials["link FIFO"], specials["link character device"]):
        with pytest.raises(Broken, match=r"config\.toml: cannot read: it is a (FIFO|character device)"):
            read_toml(RegularFile(path), "config.toml", Broken)


def test_verification_s_scan_and_test_detection_skip_a_fifo_and_a_device(tmp_path: Path) -> None:
    from cli_agent.agent.judge.verify import nearest_tests
    from cli_agent.prompt.project_tests import detect_test_command

    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "tests").mkdir()
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (tmp_path / "tests" / "test_pipe.py").symlink_to(tmp_path / "pipe")
    (tmp_path / "tests" / "test_zero.py").symlink_to("/dev/zero")
    (tmp_path / "tests" / "test_calc.py").write_text("from calc import add\n")
    assert nearest_tests(tmp_path, ["calc.py"]) == ["tests/test_calc.py"]
    (tmp_path / "pyproject.toml").symlink_to(tmp_path / "pipe")
    (tmp_path / "package.json").symlink_to("/dev/zero")
    assert detect_test_command(tmp_path) in ("pytest -q", "python3 -m pytest -q")  # from tests/, not the FIFO

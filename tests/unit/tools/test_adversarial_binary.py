"""Adversarial sizes: a file of NUL bytes with no newline is binary at any size (the 2 GB one is sparse: built in
a blink, costing no disk), and a text file whose first line is longer than read_file's window says so."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.tools.handlers.files import FILE_MAX

pytestmark = pytest.mark.usefixtures("isolated_home")


def tool(ws: Path, name: str, arguments: dict) -> dict:
    result = subprocess.run([sys.executable, "-m", "cli_agent", "tools", "run", name, json.dumps(arguments), "-C",
                             str(ws)], capture_output=True, text=True, timeout=180, env=os.environ | {"CI": "1"})
    assert result.returncode in (0, 1), result.stderr
    return json.loads(result.stdout)


@pytest.mark.slow
@pytest.mark.parametrize("size", [2 << 30, FILE_MAX + 1, FILE_MAX, 4096, 1])
def test_a_file_of_nul_bytes_is_binary_at_any_size(tmp_path: Path, size: int) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with open(ws / "zeros.bin", "wb") as f:
        f.truncate(size)  # sparse: all NUL, no newline
    read = tool(ws, "read_file", {"path": "zeros.bin"})
    assert read["ok"] and read["data"]["binary"] is True and read["data"]["size"] == size
    assert "empty" not in json.dumps(read).lower()
    edit = tool(ws, "edit_file", {"path": "zeros.bin", "old": "a", "new": "b"})
    assert not edit["ok"]


@pytest.mark.slow
def test_a_text_file_with_one_giant_line_says_so(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "one-line.txt").write_bytes(b"a" * (FILE_MAX + 10))
    read = tool(ws, "read_file", {"path": "one-line.txt"})
    assert read["ok"] and "binary" not in read["data"]
    assert read["data"]["truncated"] and "is longer than" in read["data"]["notice"]

"""Undo of a turn whose command swapped a file and a folder (`f` made a folder, `d` made a file), through the real
CLI and sandbox: every file comes back byte for byte, mode included, and nothing of the turn is left."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true"}
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, capture_output=True, text=True,
                          timeout=120)


def _snapshot(root: Path) -> dict[str, tuple[str, bytes | None, int]]:
    out = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        kind = "dir" if path.is_dir() else "file"
        out[str(path.relative_to(root))] = (kind, path.read_bytes() if kind == "file" else None, st.st_mode & 0o7777)
    return out


def test_undo_restores_a_turn_that_swapped_a_file_and_a_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "d" / "deep").mkdir(parents=True)
    (ws / "d" / "inner.txt").write_bytes(b"x\r\n\xff\x00binary")
    (ws / "d" / "deep" / "leaf.sh").write_text("#!/bin/sh\n")
    (ws / "d" / "deep" / "leaf.sh").chmod(0o755)
    (ws / "f").write_bytes(b"y\n")
    (ws / "f").chmod(0o600)
    before = _snapshot(ws)
    script = tmp_path / "script.json"
    command = "rm -rf d && echo file > d; rm f && mkdir -p f/sub && echo in > f/x.txt && echo in > f/sub/y.txt"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]},
                                  {"text": "done"}]))
    done = _cli(tmp_path, "-p", "go", "--model", f"scripted:{script}", "-C", str(ws), "--yes")
    assert done.returncode == 0, done.stderr
    assert (ws / "d").read_text() == "file\n" and (ws / "f" / "sub" / "y.txt").read_text() == "in\n"
    undone = _cli(tmp_path, "undo", "-C", str(ws))
    assert undone.returncode == 0, undone.stderr
    assert "Traceback" not in undone.stderr
    assert _snapshot(ws) == before


def test_undo_of_a_swap_still_refuses_a_folder_holding_a_file_the_turn_did_not_make(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "f").write_text("y\n")
    script = tmp_path / "script.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "run_command", "arguments": {
        "command": "rm f && mkdir f && echo in > f/x.txt"}}]}, {"text": "done"}]))
    assert _cli(tmp_path, "-p", "go", "--model", f"scripted:{script}", "-C", str(ws), "--yes").returncode == 0
    (ws / "f" / "mine.txt").write_text("the user's\n")  # written after the turn: undo must not remove it
    undone = _cli(tmp_path, "undo", "-C", str(ws))
    assert undone.returncode == 1 and "nothing was changed" in undone.stderr
    assert (ws / "f" / "mine.txt").read_text() == "the user's\n" and (ws / "f" / "x.txt").exists()

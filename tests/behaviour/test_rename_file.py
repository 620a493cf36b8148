"""rename_file: approved, journaled, undoable, and sandboxed at both ends."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clikit import cli


def _script(tmp_path: Path, *calls: dict[str, str]) -> str:
    replies = [{"tool_calls": [{"name": "rename_file", "arguments": c}]} for c in calls] + [{"text": "ok"}]
    (tmp_path / "r.json").write_text(json.dumps(replies))
    return f"scripted:{tmp_path / 'r.json'}"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    (root / ".git" / "config").write_text("[core]\n")
    (root / "a.sh").write_bytes(b"#!/bin/sh\r\necho \xff\n")
    os.chmod(root / "a.sh", 0o755)
    (root / "b.txt").write_text("b\n")
    return root


@pytest.mark.slow
def test_rename_is_approved_applied_and_undone_byte_for_byte(ws: Path, tmp_path: Path, snapshot) -> None:
    home = tmp_path / "home"
    before = snapshot(ws)
    denied = cli(["-p", "go", "--model", _script(tmp_path, {"path": "a.sh", "new_path": "bin/run.sh"}), "-C", str(ws)],
                 home=home)
    assert denied.returncode == 3 and snapshot(ws) == before
    done = cli(["-p", "go", "--model", _script(tmp_path, {"path": "a.sh", "new_path": "bin/run.sh"}), "-C", str(ws),
                "--yes"], home=home)
    assert done.returncode == 0, done.stderr
    assert not (ws / "a.sh").exists() and (ws / "bin" / "run.sh").read_bytes() == b"#!/bin/sh\r\necho \xff\n"
    assert os.stat(ws / "bin" / "run.sh").st_mode & 0o777 == 0o755
    assert cli(["undo", "-C", str(ws)], home=home).returncode == 0
    assert snapshot(ws) == before


@pytest.mark.slow
@pytest.mark.parametrize(("path", "new_path", "error"), [
    ("a.sh", "../outside.sh", "climbs out"),
    ("a.sh", "/etc/evil", "outside the workspace"),
    ("/etc/passwd", "stolen.txt", "outside the workspace"),
    (".git/config", "config", "protected"),
    ("a.sh", ".git/hooks/pre-commit", "protected"),
    ("a.sh", "b.txt", "already exists"),
    ("missing.txt", "c.txt", "does not exist"),
])
def test_both_ends_are_sandboxed(ws: Path, tmp_path: Path, snapshot, path: str, new_path: str, error: str) -> None:
    before = snapshot(ws)
    done = cli(["-p", "go", "--model", _script(tmp_path, {"path": path, "new_path": new_path}), "-C", str(ws),
                "--yes", "--output", "json"], home=tmp_path / "home")
    report = json.loads(done.stdout)
    assert report["tool_calls"][0]["ok"] is False
    assert error in " ".join(report["tool_calls"][0].get("errors", [])), report["tool_calls"][0]
    assert snapshot(ws) == before and not (tmp_path / "outside.sh").exists()

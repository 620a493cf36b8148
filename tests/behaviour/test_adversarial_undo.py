"""Adversarial undo: always whole and always true. Runs and undo on one workspace are serialized; undo checks every
file before it writes any; a change that failed leaves no journal entry; setuid, setgid and sticky bits survive an
edit and come back on undo. Each through the real CLI."""

from __future__ import annotations

import json
import os
import resource
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    return root


def cli(args: list[str], **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], capture_output=True, text=True, timeout=180,
                          env=os.environ | {"CI": "1"}, **kw)


def script(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / f"script{len(list(tmp_path.glob('script*')))}.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def write(path: str, content: str) -> dict:
    return {"tool_calls": [{"name": "write_file", "arguments": {"path": path, "content": content}}]}


@pytest.mark.slow
def test_undo_while_a_turn_runs_is_refused_and_the_turn_stays_whole(ws: Path, tmp_path: Path) -> None:
    model = script(tmp_path, [write("a.txt", "agent a\n"), {**write("b.txt", "agent b\n"), "delay": 4.0},
                              {"text": "done"}])
    run = subprocess.Popen([sys.executable, "-m", "cli_agent", "-C", str(ws), "--model", model, "-y", "-p", "go"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=os.environ | {"CI": "1"})
    try:
        deadline = time.monotonic() + 60
        while (ws / "a.txt").read_text() != "agent a\n":  # the turn has started changing files
            assert time.monotonic() < deadline and run.poll() is None
            time.sleep(0.05)
        busy = cli(["undo", "-C", str(ws)])
        assert busy.returncode == 1 and "a turn is running" in busy.stderr.splitlines()[-1], busy.stderr
        assert (ws / "a.txt").read_text() == "agent a\n"  # nothing was reverted
    finally:
        _, err = run.communicate(timeout=120)
        assert run.returncode == 0, err
    assert (ws / "b.txt").read_text() == "agent b\n"
    done = cli(["undo", "-C", str(ws)])
    assert done.returncode == 0, done.stderr
    assert (ws / "a.txt").read_text() == "a\n" and (ws / "b.txt").read_text() == "b\n"  # the whole turn


@pytest.mark.slow
@pytest.mark.parametrize("spoil", ["hard link", "changed", "now a folder", "now a link"])
def test_undo_checks_every_file_before_writing_any(ws: Path, tmp_path: Path, spoil: str) -> None:
    model = script(tmp_path, [{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt",
                                                                                   "content": "agent a\n"}},
                                              {"name": "write_file", "arguments": {"path": "b.txt",
                                                                                   "content": "agent b\n"}}]},
                              {"text": "done"}])
    assert cli(["-C", str(ws), "--model", model, "-y", "-p", "go"]).returncode == 0
    b = ws / "b.txt"  # undo reverts b first (newest first), a second: spoil the one checked last
    target = ws / "a.txt"
    if spoil == "hard link":
        os.link(target, tmp_path / "elsewhere")
    elif spoil == "changed":
        target.write_text("user edit\n")
    elif spoil == "now a folder":
        target.unlink()
        target.mkdir()
    else:
        target.rename(tmp_path / "moved")
        target.symlink_to(tmp_path / "moved")
    result = cli(["undo", "-C", str(ws)])
    assert result.returncode == 1 and "nothing was changed" in result.stderr.splitlines()[-1], result.stderr
    assert b.read_text() == "agent b\n"  # untouched although it could have been reverted
    assert "(undone)" not in cli(["undo", "--list", "-C", str(ws)]).stdout


@pytest.mark.slow
def test_a_change_that_failed_leaves_no_journal_entry(ws: Path, tmp_path: Path) -> None:
    """A file size limit (EFBIG) makes the write fail after the journal recorded it; the entry must go. The edit is
    small (the trace stays small) and grows the file past the limit."""
    (ws / "a.txt").write_text("x\n" * 1000)
    model = script(tmp_path, [{"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "x",
                                                                                  "new": "y" * 200,
                                                                                  "replace_all": True}}]},
                              {"text": "tried"}])

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000))

    result = subprocess.run([sys.executable, "-m", "cli_agent", "-C", str(ws), "--model", model, "-y", "-o", "json",
                             "-p", "go"], capture_output=True, text=True, timeout=180, preexec_fn=limit,
                            env=os.environ | {"CI": "1"})
    report = json.loads(result.stdout)  # the run may end on the failed change (its own exit code), not crash
    assert result.returncode not in (1, 2) and report["exit_code"] == result.returncode, result.stderr
    assert report["files_changed"] == [] and report["tool_calls"][0]["ok"] is False
    assert (ws / "a.txt").read_text() == "x\n" * 1000
    listed = cli(["undo", "--list", "--json", "-C", str(ws)])
    assert json.loads(listed.stdout) == []
    nothing = cli(["undo", "-C", str(ws)])
    assert nothing.returncode == 2 and "nothing to undo" in nothing.stderr


@pytest.mark.slow
@pytest.mark.parametrize("bits", [stat.S_ISUID, stat.S_ISGID, stat.S_ISVTX, stat.S_ISUID | stat.S_ISGID])
@pytest.mark.parametrize("tool", ["edit_file", "write_file", "delete_file"])
def test_special_mode_bits_survive_an_edit_and_come_back_on_undo(ws: Path, tmp_path: Path, bits: int,
                                                                  tool: str) -> None:
    path = ws / "tool.sh"
    path.write_text("#!/bin/sh\necho one\n")
    os.chmod(path, 0o755 | bits)
    arguments = {"edit_file": {"path": "tool.sh", "old": "one", "new": "two"},
                 "write_file": {"path": "tool.sh", "content": "#!/bin/sh\necho two\n"},
                 "delete_file": {"path": "tool.sh"}}[tool]
    result = cli(["tools", "run", tool, json.dumps(arguments), "-C", str(ws), "--yes"])
    assert result.returncode == 0, result.stderr
    if tool != "delete_file":
        assert stat.S_IMODE(path.stat().st_mode) == 0o755 | bits
    assert cli(["undo", "-C", str(ws)]).returncode == 0
    assert path.read_text() == "#!/bin/sh\necho one\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o755 | bits

"""Adversarial atomicity: `kill -9` in the middle of a write (a real `cli-agent tools run write_file` process, and a
child process writing large files through the dispatcher), many times; `RLIMIT_FSIZE` exceeded mid-write. The file
is always old or new, never partial, and the undo journal stays consistent: undoing every journaled turn gives back
the original bytes."""

from __future__ import annotations

import json
import os
import random
import resource
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from cli_agent.contracts.errors import UsageError
from cli_agent.fs.atomic import TEMP_PREFIX
from cli_agent.history.journal import Journal
from cli_agent.history.undo import undo_turn

KILLS = int(os.environ.get("CLI_AGENT_KILLS", "8"))  # per test; raise it for a longer soak


def env_for(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    return env | {"CLI_AGENT_HOME": str(home), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def leftovers(root: Path) -> int:
    """Remove (and count) the temporary files a killed writer left: a kill that landed mid-write."""
    stray = [p for p in root.iterdir() if p.name.startswith(TEMP_PREFIX)]
    for p in stray:
        p.unlink()
    return len(stray)


def undo_everything(journal: Journal) -> int:
    n = 0
    while True:
        try:
            undo_turn(journal)
        except UsageError:
            return n
        n += 1


def journal_lines(home: Path) -> int:
    files = list((home / "state" / "journal").glob("*/journal.jsonl"))
    return len(files[0].read_bytes().splitlines()) if files else 0


@pytest.mark.slow
def test_kill_9_of_a_real_tools_run_write_file_mid_write(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    old = b"old line of the original file\n" * 3500  # ~100 KB
    new = "new line written by the agent\n" * 4000  # ~120 KB: one argv string stays under Linux's 128 KiB
    (ws / "big.txt").write_bytes(old)
    args = json.dumps({"path": "big.txt", "content": new})
    rng = random.Random(9)
    outcomes = {"old": 0, "new": 0, "mid_write": 0}
    for _ in range(KILLS):
        seen = journal_lines(home)
        proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "tools", "run", "write_file", args, "-y", "-C",
                                 str(ws)], env=env_for(home), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 120
        while proc.poll() is None and journal_lines(home) <= seen and time.monotonic() < deadline:
            time.sleep(0.0005)  # kill once the entry is on disk: the write is starting
        time.sleep(rng.uniform(0, 0.03))
        proc.kill()
        proc.wait(timeout=60)
        data = (ws / "big.txt").read_bytes()
        assert data in (old, new.encode()), f"partial file: {len(data)} bytes"
        outcomes["new" if data == new.encode() else "old"] += 1
        outcomes["mid_write"] += leftovers(ws)
        if data == new.encode():
            assert journal_lines(home) > seen  # written only after its journal entry
        undo_everything(Journal(ws, home=home / "state" / "journal"))
        assert (ws / "big.txt").read_bytes() == old
    print(f"FIGURE kill -9 of cli-agent tools run write_file: {KILLS} kills survived {outcomes}")


_WRITER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.history.journal import Journal
    from cli_agent.contracts.messages import ToolCall
    from cli_agent.tools.registry import Registry
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools import ToolContext
    root, home = sys.argv[1], Path(sys.argv[2])
    journal = Journal(root, home=home)

    def hook(change):
        journal.record(change)
        print("writing", flush=True)  # the entry is on disk; the temp file is next

    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root, before_write=hook)))
    contents = ["A" * 99 + "\\n", "B" * 99 + "\\n"]
    contents = [c * 80_000 for c in contents]  # 8 MB each
    print("ready", flush=True)
    n = 0
    while True:
        journal.begin_turn("writer")
        env = d.run(ToolCall("c", "write_file", {"path": "big.txt", "content": contents[n % 2]}, "{}"))
        if not env.ok and "exactly this content" not in env.errors[0]:
            print(env.errors, flush=True)
            sys.exit(3)
        n += 1
""")


@pytest.mark.slow
def test_kill_9_of_a_process_writing_8_mb_files_through_the_dispatcher(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "journal"
    ws.mkdir()
    original = b"the original\n" * 1000
    (ws / "big.txt").write_bytes(original)
    allowed = {original, (b"A" * 99 + b"\n") * 80_000, (b"B" * 99 + b"\n") * 80_000}
    rng = random.Random(4)
    mid_write = 0
    for _ in range(KILLS):
        proc = subprocess.Popen([sys.executable, "-c", _WRITER, str(ws), str(home)], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
        for _ in range(rng.randint(1, 2)):
            assert proc.stdout.readline() == "writing\n"
        time.sleep(rng.uniform(0, 0.03))
        proc.kill()
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == -signal.SIGKILL, err
        assert (ws / "big.txt").read_bytes() in allowed, "partial file"
        mid_write += leftovers(ws)
    turns = undo_everything(Journal(ws, home=home))
    assert (ws / "big.txt").read_bytes() == original
    print(f"FIGURE kill -9 of a dispatcher writing 8 MB files: {KILLS} kills survived, {mid_write} landed mid-write "
          f"(a temp file left), {turns} journaled turns undone back to the original")


@pytest.mark.slow
def test_rlimit_fsize_mid_write_leaves_the_original(tmp_path: Path) -> None:
    """Python ignores SIGXFSZ, so the write fails with EFBIG and the process says so; the file is unchanged."""
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    original = b"original\n" * 1000  # 9 KB: its before-image fits in the journal under the limit
    (ws / "f.txt").write_bytes(original)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, resource.RLIM_INFINITY))

    done = subprocess.run([sys.executable, "-m", "cli_agent", "tools", "run", "write_file",
                           json.dumps({"path": "f.txt", "content": "x" * 100_000}), "-y", "-C", str(ws)],
                          env=env_for(home), capture_output=True, text=True, timeout=120, preexec_fn=limit)
    assert (ws / "f.txt").read_bytes() == original
    assert done.returncode == 1, done.stderr
    assert done.stderr.splitlines()[-1] == "cli-agent: f.txt was not written: File too large; it is unchanged"
    assert [p.name for p in ws.iterdir()] == ["f.txt"]  # the temp file is gone too

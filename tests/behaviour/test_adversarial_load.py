"""Load: a scripted 2,000-step session through the real CLI (in a child process that reports its peak RSS) ends
with a valid trace and bounded memory; 10 MB files are read in pages and edited correctly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from cli_agent.fs.workspace import Workspace
from cli_agent.history.journal import Journal
from cli_agent.history.trace import read_trace
from cli_agent.history.undo import undo_turn
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files

STEPS = int(os.environ.get("CLI_AGENT_LOAD_STEPS", "2000"))
PEAK_RSS_MB = 400

_CHILD = textwrap.dedent("""
    import json, sys
    from cli_agent.cli.main import run
    code = run(sys.argv[1:])
    # this process's own high-water mark: ru_maxrss starts at the parent's peak (a vfork child inherits it at exec)
    with open("/proc/self/status") as status:
        peak_kb = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
    print(json.dumps({"code": code, "peak_mb": peak_kb / 1024}), file=sys.stderr)
""")


def script(steps: int) -> list[dict[str, object]]:
    """`steps` replies of one tool call each (mostly reads; every 25th a journaled edit), then the answer."""
    replies: list[dict[str, object]] = []
    for n in range(steps):
        if n % 25 == 24:
            call = {"name": "edit_file", "arguments": {"path": "counter.txt", "old": f"count {n - 25}",
                                                       "new": f"count {n}"}}
        else:
            call = [{"name": "read_file", "arguments": {"path": "notes.md", "start_line": 1 + n % 40,
                                                        "end_line": 2 + n % 40}},
                    {"name": "search", "arguments": {"pattern": f"line {n % 50}\\b"}},
                    {"name": "list_files", "arguments": {"depth": 1}}][n % 3]
        replies.append({"tool_calls": [call]})
    return [*replies, {"text": f"done after {steps} steps"}]


@pytest.mark.slow
def test_a_2000_step_session_ends_with_a_valid_trace_and_bounded_memory(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    (ws / "notes.md").write_text("".join(f"line {n} of the notes\n" for n in range(60)))
    (ws / "counter.txt").write_text("count -1\n")
    (tmp_path / "script.json").write_text(json.dumps(script(STEPS)))
    trace = tmp_path / "trace.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {
        "CLI_AGENT_HOME": str(home), "CI": "true"}
    done = subprocess.run([sys.executable, "-c", _CHILD, "-p", "work a long time on counter.txt", "--model",
                           f"scripted:{tmp_path / 'script.json'}", "--max-steps", str(STEPS + 5), "--yes",
                           "--timeout", "3000", "-C", str(ws), "--trace", str(trace), "--output", "json"],
                          env=env, capture_output=True, text=True, timeout=600)
    child = json.loads(done.stderr.strip().splitlines()[-1])
    assert child["code"] == 0, done.stderr[-2000:]
    report = json.loads(done.stdout)
    assert report["status"] == "done" and report["steps"] == STEPS + 1
    assert report["answer"] == f"done after {STEPS} steps" and len(report["tool_calls"]) == STEPS
    assert all(c["ok"] for c in report["tool_calls"])
    read = read_trace(trace)  # strict: format, every line, and the final run_finished
    assert read is not None
    kinds = [json.loads(line)["type"] for line in trace.read_text().splitlines()]
    assert kinds.count("tool_result") == STEPS and kinds[-1] == "run_finished"
    edits = STEPS // 25
    assert (ws / "counter.txt").read_text() == f"count {25 * edits - 1}\n"
    journal = Journal(ws, home=home / "state" / "journal")
    (turn,) = journal.turns()
    assert len(turn.changes) == edits
    undo_turn(journal)
    assert (ws / "counter.txt").read_text() == "count -1\n"
    assert child["peak_mb"] < PEAK_RSS_MB, child
    print(f"FIGURE {STEPS}-step scripted session: peak RSS {child['peak_mb']:.0f} MB, trace "
          f"{trace.stat().st_size / 1e6:.1f} MB, {len(kinds)} events, {edits} journaled edits undone")


@pytest.mark.slow
def test_10_mb_files_are_read_in_pages_and_edited_correctly(tmp_path: Path) -> None:
    lines = [f"{n:07d} the quick brown fox jumps over the lazy dog, line {n}\r\n" for n in range(170_000)]
    original = "".join(lines).encode()
    assert len(original) > 10 << 20
    (tmp_path / "big.txt").write_bytes(original)
    journal = Journal(tmp_path, home=tmp_path.parent / f"{tmp_path.name}-journal")
    ws = Workspace(tmp_path, before_write=journal.record)
    ctx = ToolContext(ws)
    pages, text, start = 0, [], 1
    while True:
        page = files.read_file(ctx, "big.txt", start_line=start)
        pages += 1
        text.append(page["content"])
        if page["end_line"] >= page["total_lines"]:
            break
        assert "read on" in page["notice"]
        start = page["end_line"] + 1
    assert "".join(text).replace("\n", "\r\n").encode() == original and pages >= 40
    journal.begin_turn("load")
    ws.apply(files.edit_file(ctx, "big.txt", "0080000 the quick", "0080000 THE QUICK"))
    ws.apply(files.edit_file(ctx, "big.txt", "lazy dog, line 169999\n", "lazy cat, line 169999\nthe end\n"))
    expected = original.replace(b"0080000 the quick", b"0080000 THE QUICK").replace(
        b"lazy dog, line 169999\r\n", b"lazy cat, line 169999\r\nthe end\r\n")
    assert (tmp_path / "big.txt").read_bytes() == expected
    undo_turn(journal)
    assert (tmp_path / "big.txt").read_bytes() == original
    print(f"FIGURE 10 MB file: {len(original) / 1e6:.1f} MB read in {pages} pages, 2 edits, undone byte for byte")

"""Adversarial terminal output: nothing a model or a repository wrote acts on the terminal. Every command that
prints model- or repository-controlled text runs in a pseudo-terminal here, with hostile text planted by the test
(SGR 8 hiding text, OSC 52 writing the clipboard, OSC 8 hyperlinks, screen clears, C1 CSI, bidi overrides), and
no control sequence, C1 control or bidi mark of it may arrive (cli-agent's own styling may use other escapes)."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.usefixtures("isolated_home")

HOSTILE = ("\x1b[8mhidden\x1b[0m \x1b]52;c;cHduZWQ=\x07 \x1b]8;;http://evil/\x07link\x1b]8;;\x07 \x1b[2J\x1bc"
           " \x9b31m \u202eevil\u202c \x07\x08\r")
# every control sequence of HOSTILE, byte for byte (cli-agent's own styling, e.g. a spinner, may use others)
FORBIDDEN = [b"\x1b[8m", b"\x1b]52;", b"\x1b]8;;", b"\x1b[2J", b"\x1bc", "\x9b".encode(), "\u202e".encode(),
             "\u202c".encode(), b"\x07", b"\x08"]


def in_pty(args: list[str], cwd: Path | None = None, stdin: bytes | None = None) -> tuple[int, bytes]:
    """Run cli-agent with stdout and stderr on a pseudo-terminal; (exit code, everything the terminal got)."""
    master, slave = os.openpty()
    env = {k: v for k, v in os.environ.items() if k != "CI"} | {"TERM": "xterm", "COLUMNS": "200"}
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", *args], stdin=subprocess.PIPE if stdin else slave,
                            stdout=slave, stderr=slave, cwd=cwd or "/", env=env, close_fds=True)
    os.close(slave)
    if stdin:
        assert proc.stdin is not None
        proc.stdin.write(stdin)
        proc.stdin.close()
    out = b""
    while True:
        ready, _, _ = select.select([master], [], [], 120)
        if not ready:
            proc.kill()
            raise AssertionError(f"no output for 120 s from {args}")
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the other side closed
            break
        if not chunk:
            break
        out += chunk
    os.close(master)
    return proc.wait(timeout=60), out


@pytest.fixture
def planted(tmp_path: Path) -> dict[str, Any]:
    """A workspace whose repository and model wrote hostile text everywhere they can."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "AGENTS.md").write_text(f"Be nice. {HOSTILE}\n")
    (ws / f"file{HOSTILE[:12]}.txt").write_text("x\n")
    (ws / ".cli-agent" / "workflows").mkdir(parents=True)
    (ws / ".cli-agent" / "config.toml").write_text(f"system_prompt = {json.dumps(HOSTILE)}\n")
    (ws / ".cli-agent" / "workflows" / "evil.toml").write_text(
        f'name = "evil"\ntitle = {json.dumps(HOSTILE)}\ndescription = {json.dumps(HOSTILE)}\ncategory = "Project"\n'
        '[[steps]]\nprompt = "hi"\n')
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "propose_fact", "arguments": {"text": f"fact one {HOSTILE}", "reason": HOSTILE}},
                        {"name": "propose_fact", "arguments": {"text": f"fact two {HOSTILE}", "reason": "r"}},
                        {"name": "create_file", "arguments": {"path": f"new{HOSTILE[:12]}.txt", "content": "x"}}]},
        {"text": f"the answer {HOSTILE}"}]))
    trace = tmp_path / "trace.jsonl"
    code, out = in_pty(["-C", str(ws), "--model", f"scripted:{script}", "-y", "--trace", str(trace),
                        "-p", f"task {HOSTILE}"])
    assert code == 0, out
    return {"ws": ws, "script": script, "trace": trace, "first_run": out}


def commands(p: dict[str, Path]) -> list[list[str]]:
    ws = str(p["ws"])
    again = p["script"].parent / "again.json"
    again.write_text(json.dumps([{"text": f"again {HOSTILE}"}]))
    return [
        ["-C", ws, "--model", f"scripted:{again}", "-p", "hi"],
        ["-C", ws, "--model", f"scripted:{again}", "-o", "json", "-p", "hi"],
        ["-C", ws, "--model", f"scripted:{again}", "-o", "stream-json", "-p", "hi"],
        ["facts", "-C", ws], ["facts", "list", "-C", ws], ["facts", "--json", "-C", ws],
        ["facts", "commit", "f1", "-C", ws], ["facts", "reject", "f2", "-C", ws], ["facts", "-C", ws],
        ["prompt", "-C", ws], ["prompt", "--json", "-C", ws], ["--trust", "config", "show", "-C", ws],
        ["config", "path", "-C", ws], ["workflows", "-C", ws], ["sessions", "-C", ws], ["sessions", "--json", "-C", ws],
        ["undo", "--list", "-C", ws], ["undo", "--list", "--json", "-C", ws],
        ["tools", "run", "read_file", json.dumps({"path": "AGENTS.md"}), "-C", ws],
        ["tools", "run", "read_file", json.dumps({"path": f"missing{HOSTILE}"}), "-C", ws],
        ["tools", "run", "list_files", "{}", "-C", ws],
        ["replay", str(p["trace"])], ["replay", str(p["trace"]), "-o", "json"],
        ["undo", "-C", ws], ["trust", "-C", ws], ["trust", "--list"],
        ["workflow", "run", "evil", "-C", ws, "--model", f"scripted:{again}"],
        ["-C", ws, "--model", f"scripted:{p['script'].parent / f'missing{HOSTILE}.json'}", "-p", "hi"],
    ]


@pytest.mark.slow
def test_no_command_lets_hostile_text_act_on_the_terminal(planted: dict[str, Any]) -> None:
    assert not any(bad in planted["first_run"] for bad in FORBIDDEN)
    checked = shown = 0
    for args in commands(planted):
        code, out = in_pty(args)
        assert code in (0, 1, 2), (args, code, out[-400:])
        for bad in FORBIDDEN:
            assert bad not in out, (args, bad, out[-600:])
        checked += 1
        shown += b"\\x1b" in out or b"\\u001b" in out  # the hostile text is there, visibly escaped
    assert checked == 28 and shown >= 20, shown

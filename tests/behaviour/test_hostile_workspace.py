"""Hostile folders and files, end to end as a user starts cli-agent: the filesystem's root, HOME and a folder that
holds HOME are no workspace in any front end (one line, exit 2; a JSON-RPC error over ACP), and a config, facts,
workflow or pyproject.toml that is a link to a FIFO or to /dev/zero ends the run at once with one line, or is
skipped, never a hang or a traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from clikit import cli

pytestmark = [pytest.mark.usefixtures("isolated_home"), pytest.mark.slow]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A fake HOME with a secret in it, and a project folder inside it."""
    root = tmp_path / "user"
    (root / ".ssh").mkdir(parents=True)
    (root / ".ssh" / "id_ed25519").write_text("PRIVATE KEY\n")
    (root / "project").mkdir()
    return root


def _script(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def _one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


@pytest.mark.parametrize("folder", ["~", "/", "HOLDER"])
@pytest.mark.parametrize("mode", ["prompt", "repl", "mcp"])
def test_root_home_and_a_folder_holding_home_are_refused(folder, mode, home, tmp_path, isolated_home):
    model = _script(tmp_path, [{"tool_calls": [{"name": "read_file", "arguments": {"path": ".ssh/id_ed25519"}}]},
                               {"text": "done"}])
    where = str(home.parent) if folder == "HOLDER" else folder
    args = {"prompt": ["--model", model, "-C", where, "-p", "read my key"],
            "repl": ["--model", model, "-C", where],
            "mcp": ["mcp", "serve", "-C", where]}[mode]
    done = cli(args, home=isolated_home, timeout=60, env_extra={"HOME": str(home)})
    assert done.returncode == 2, done
    line = _one_line(done.stderr)
    assert "open a project folder" in line
    assert "PRIVATE KEY" not in done.stdout + done.stderr


def test_a_project_inside_home_is_a_workspace(home, tmp_path, isolated_home):
    done = cli(["--model", _script(tmp_path, [{"text": "fine"}]), "-C", "~/project", "-p", "hi"], home=isolated_home,
               timeout=60, env_extra={"HOME": str(home)})
    assert done.returncode == 0, done.stderr
    assert "fine" in done.stdout


def test_acp_session_new_refuses_root_and_home_with_a_json_rpc_error(home, tmp_path):
    model = _script(tmp_path, [{"text": "hi"}])
    lines = [{"id": 1, "method": "initialize", "params": {"protocolVersion": 1}}]
    for number, cwd in enumerate(("/", str(home), str(home.parent), str(home / "project")), 2):
        lines.append({"id": number, "method": "session/new", "params": {"cwd": cwd, "mcpServers": []}})
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI", "PATH"))}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", model, "acp", "-C", str(home / "project")],
                          input="".join(json.dumps({"jsonrpc": "2.0", **line}) + "\n" for line in lines),
                          capture_output=True, text=True, timeout=60, env=env | {"HOME": str(home)})
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    by_id = {r.get("id"): r for r in map(json.loads, done.stdout.splitlines()) if "method" not in r}
    for number in (2, 3, 4):
        assert "open a project folder" in by_id[number]["error"]["message"], by_id[number]
    assert by_id[5]["result"]["sessionId"]


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("rel", [".cli-agent/config.toml", ".cli-agent/facts.toml"])
def test_a_config_or_facts_file_that_is_no_regular_file_is_refused_with_exit_2(rel, target, fifo, tmp_path,
                                                                                 isolated_home):
    ws = tmp_path / "ws"
    (ws / ".cli-agent").mkdir(parents=True)
    (ws / rel).symlink_to(fifo if target == "fifo" else target)
    done = cli(["--model", _script(tmp_path, [{"text": "ok"}]), "-C", str(ws), "-p", "hi"], home=isolated_home,
               timeout=60)
    assert done.returncode == 2, done
    line = _one_line(done.stderr)
    assert rel in line and ("a FIFO" in line or "a character device" in line) and "MemoryError" not in line


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
@pytest.mark.parametrize("rel", ["pyproject.toml", ".cli-agent/workflows/review.toml"])
def test_a_pyproject_or_workflow_that_is_no_regular_file_is_skipped(rel, target, fifo, tmp_path, isolated_home):
    ws = tmp_path / "ws"
    (ws / ".cli-agent" / "workflows").mkdir(parents=True)
    (ws / rel).symlink_to(fifo if target == "fifo" else target)
    done = cli(["--model", _script(tmp_path, [{"text": "ok"}]), "--trust", "-C", str(ws), "-p", "hi"],
               home=isolated_home, timeout=60)
    assert done.returncode == 0, done
    assert "ok" in done.stdout and "Traceback" not in done.stderr
    listed = cli(["--trust", "-C", str(ws), "workflows"], home=isolated_home, timeout=60)
    assert "Traceback" not in listed.stderr
    if "workflows" in rel:
        assert "review.toml: cannot read: it is" in listed.stderr


def test_acp_with_a_fifo_workflow_answers_a_300000_letter_prompt_and_exits_when_stdin_closes(fifo, tmp_path):
    ws = tmp_path / "ws"
    (ws / ".cli-agent" / "workflows").mkdir(parents=True)
    (ws / ".cli-agent" / "workflows" / "review.toml").symlink_to(fifo)
    model = _script(tmp_path, [{"text": "answered"}])
    lines = [{"id": 1, "method": "initialize", "params": {"protocolVersion": 1}},
             {"id": 2, "method": "session/new", "params": {"cwd": str(ws), "mcpServers": []}}]
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI", "PATH", "HOME"))}
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "--model", model, "--trust", "acp", "-C", str(ws)],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for line in lines:
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", **line}) + "\n")
        proc.stdin.flush()
        session = None
        while session is None:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == 2:
                session = reply["result"]["sessionId"]
        prompt = {"sessionId": session, "prompt": [{"type": "text", "text": "a" * 300_000}]}  # one long word
        proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 3, "method": "session/prompt", "params": prompt}) + "\n")
        proc.stdin.flush()
        while True:
            reply = json.loads(proc.stdout.readline())
            if reply.get("id") == 3:
                break
        assert reply["result"]["stopReason"] == "end_turn"
        proc.stdin.close()
        assert proc.wait(timeout=30) == 0
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_a_config_flag_naming_a_fifo_or_a_device_is_refused(target, fifo, tmp_path, isolated_home):
    ws = tmp_path / "ws"
    ws.mkdir()
    done = cli(["--config", str(fifo) if target == "fifo" else target, "-C", str(ws), "-p", "hi"],
               home=isolated_home, timeout=60)
    assert done.returncode == 2, done
    assert "not a regular file; refused" in _one_line(done.stderr)


def test_acp_answers_a_55_mb_line_with_one_error_and_keeps_serving(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    huge = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                       "params": {"protocolVersion": 1, "pad": "a" * (55 << 20)}})
    init = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": 1}})
    env = {k: v for k, v in os.environ.items() if k.startswith(("CLI_AGENT_", "PYTHON", "CI", "PATH", "HOME"))}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "--model", _script(tmp_path, [{"text": "hi"}]), "acp",
                           "-C", str(ws)], input=f"{huge}\n{init}\n", capture_output=True, text=True, timeout=120,
                          env=env)
    assert done.returncode == 0 and "Traceback" not in done.stderr
    replies = [json.loads(line) for line in done.stdout.splitlines()]
    assert [r.get("error", {}).get("code") for r in replies] == [-32600, None]  # one error for the one line
    assert replies[1]["id"] == 1 and replies[1]["result"]["agentCapabilities"]


@pytest.mark.parametrize("target", ["fifo", "/dev/zero"])
def test_replay_of_a_trace_that_is_a_fifo_or_a_device_is_refused(target, fifo, tmp_path, isolated_home):
    link = tmp_path / "trace.jsonl"
    link.symlink_to(fifo if target == "fifo" else target)
    done = cli(["replay", str(link)], home=isolated_home, timeout=60)
    assert done.returncode == 2, done
    assert "cannot read the trace: it is a" in _one_line(done.stderr)

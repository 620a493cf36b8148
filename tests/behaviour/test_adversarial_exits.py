"""Adversarial exits: `--output json` prints exactly one object on every exit path (usage and configuration errors
included), with what could act on a terminal or fail to encode escaped; a broken `--config` exits 2 in every
command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.usefixtures("isolated_home")

KEYS = {"status", "exit_code", "answer", "steps", "tool_calls", "files_changed", "usage", "trace"}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "a.txt").write_text("a\n")
    return tmp_path / "ws"


def cli(args: list[str], extra: dict[str, str] | None = None, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")} | {"CI": "1"} | (extra or {})
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], capture_output=True, text=True, timeout=180,
                          env=env, input=stdin)


def one_object(result: subprocess.CompletedProcess[str]) -> dict:
    lines = [line for line in result.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, result.stdout
    report = json.loads(lines[0])
    assert set(report) >= KEYS and report["exit_code"] == result.returncode
    assert result.stdout.isascii() or not any(0x80 <= ord(c) < 0xA0 for c in result.stdout)
    return report


def model(tmp_path: Path, replies: list[dict]) -> str:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


@pytest.mark.slow
def test_every_usage_and_config_error_prints_one_json_object(ws: Path, tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("max_steps = 'x'\n")
    (tmp_path / "lockws" / ".cli-agent").mkdir(parents=True)
    (tmp_path / "lockws" / ".cli-agent" / "config.toml").write_text('locks = ["src/["]\n')
    m = model(tmp_path, [{"text": "hi"}])
    cases = [
        ["--config", str(broken), "-o", "json", "-C", str(ws), "--model", m, "-p", "go"],
        ["-o", "json", "--no-such-flag", "-p", "go"],
        ["-o", "json", "--max-steps", "0", "-C", str(ws), "--model", m, "-p", "go"],
        ["-o", "json", "-C", str(tmp_path / "missing"), "--model", m, "-p", "go"],
        ["-o", "json", "-C", str(ws), "--model", m, "-p", "   "],
        ["-o", "json", "-C", str(tmp_path / "lockws"), "--model", m, "-p", "go"],
        ["-o", "json", "-C", str(ws), "--model", f"scripted:{tmp_path / 'nope.json'}", "-p", "go"],
        ["--output=json", "-C", str(ws), "--model", m, "--resume", "no-such-session", "-p", "go"],
        ["-o", "json", "-C", str(ws), "--model", m, "workflow", "run", "no-such-workflow"],
    ]
    for args in cases:
        result = cli(args)
        assert result.returncode == 2, (args, result.stderr)
        report = one_object(result)
        assert report["status"] == "usage" and report["message"] in result.stderr.splitlines()[-1], args
    from_env = cli(["-C", str(ws), "--model", m, "--max-steps", "0", "-p", "go"], {"CLI_AGENT_OUTPUT": "json"})
    assert from_env.returncode == 2 and one_object(from_env)["status"] == "usage"


@pytest.mark.slow
@pytest.mark.parametrize(("replies", "flags", "code", "status"), [
    ([{"text": "fine"}], [], 0, "done"),
    ([{"tool_calls": [{"name": "write_file", "arguments": {"path": "a.txt", "content": "b"}}]}], [], 3, "denied"),
    ([{"tool_calls": [{"name": "read_file", "arguments": {"path": "a.txt"}}]}] * 3, ["--max-steps", "2"], 4,
     "step_limit"),
    ([{"raw": "{tool: x}"}] * 3, ["--protocol", "json"], 6, "unusable"),
    ([{"error": "fatal", "message": "boom"}], [], 1, "error"),
    ([{"error": "missing_key"}], [], 2, "usage"),
])
def test_every_run_outcome_prints_exactly_one_object(ws: Path, tmp_path: Path, replies: list[dict],
                                                     flags: list[str], code: int, status: str) -> None:
    result = cli(["-C", str(ws), "--model", model(tmp_path, replies), "-o", "json", *flags, "-p", "go"])
    assert result.returncode == code, result.stderr
    assert one_object(result)["status"] == status


@pytest.mark.slow
def test_names_that_are_not_utf8_c1_or_bidi_are_escaped_in_json(ws: Path, tmp_path: Path) -> None:
    os.close(os.open(os.path.join(os.fsencode(ws), b"bad\xff\x9b.txt"), os.O_CREAT | os.O_WRONLY, 0o644))
    (ws / "rtl\u202etxt.exe").write_text("x")
    m = model(tmp_path, [{"tool_calls": [{"name": "list_files", "arguments": {}},
                                         {"name": "create_file", "arguments": {"path": "c1\u009b\u202e.txt",
                                                                               "content": "x"}}]},
                         {"text": "listed \u009b\u202e"}])
    for output in ("json", "stream-json"):
        result = subprocess.run([sys.executable, "-m", "cli_agent", "-C", str(ws), "--model", m, "-y", "-o", output,
                                 "-p", "go"], capture_output=True, timeout=180, env=os.environ | {"CI": "1"})
        assert result.returncode == 0, result.stderr
        out = result.stdout
        out.decode("utf-8")  # valid UTF-8 throughout
        for raw in (b"\xff", "\u009b".encode(), "\u202e".encode()):
            assert raw not in out, (output, raw)
        lines = [json.loads(line) for line in out.decode().splitlines()]
        if output == "json":
            assert lines[0]["files_changed"] == ["c1\u009b\u202e.txt"]  # the same name, once decoded
            assert lines[0]["answer"] == "listed \u009b\u202e"
        else:
            assert any("bad\udcff" in json.dumps(e, ensure_ascii=False) for e in lines)
        (ws / "c1\u009b\u202e.txt").unlink()  # the next output's run creates it again


COMMANDS = [["tools"], ["tools", "--json"], ["prompt"], ["config", "show"], ["config", "path"], ["workflows"],
            ["facts"], ["sessions"], ["undo", "--list"], ["replay", "t.jsonl"], ["eval"], ["local", "status"],
            ["tools", "run", "read_file", '{"path": "a.txt"}'], ["-p", "hi"], ["workflow", "run", "explain", "a.txt"]]


@pytest.mark.slow
@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_broken_config_file_exits_2_in_every_command(ws: Path, tmp_path: Path, command: list[str]) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[unclosed\n")
    result = subprocess.run([sys.executable, "-m", "cli_agent", "--config", str(broken), "-C", str(ws), *command],
                            capture_output=True, text=True, timeout=180, cwd=ws, env=os.environ | {"CI": "1"})
    assert result.returncode == 2, (command, result.stdout, result.stderr)
    assert "broken.toml" in result.stderr.splitlines()[-1]

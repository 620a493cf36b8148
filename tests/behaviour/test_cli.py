"""The real CLI, in process (`cli.run` with an injected provider factory) and as a subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli_agent import __version__
from cli_agent.cli.main import run
from cli_agent.history.trace import read_trace
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")



def scripted(*replies, native=True):
    provider = ScriptedProvider(list(replies), native_tools=native)
    return provider, (lambda settings: provider)


def cli_subprocess(args, *, cwd, home, stdin=None, timeout=60, env_extra=None):
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(home), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"} | (env_extra or {})
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], cwd=cwd, env=env, input=stdin,
                          capture_output=True, text=True, timeout=timeout)


def write_script(path: Path, replies) -> str:
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


def test_version(capsys):
    assert run(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"cli-agent {__version__}"


def test_bad_flag_exits_2_with_one_line(capsys):
    assert run(["--max-steps", "many", "-p", "x"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cli-agent: usage error")


def test_a_key_but_no_model_is_a_usage_error(ws, capsys, monkeypatch):
    """With a provider key configured, cli-agent does not guess a model (with none, it uses the local one)."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert run(["-C", str(ws), "-p", "hi"]) == 2
    assert "--model" in capsys.readouterr().err


def test_one_shot_text_answer(ws, capsys):
    _, factory = scripted({"text": "The answer."})
    assert run(["-C", str(ws), "-p", "question", "--model", "x"], provider_factory=factory) == 0
    assert capsys.readouterr().out == "The answer.\n"


def test_one_shot_json_reports_denied_calls_with_the_rule(ws, capsys):
    _, factory = scripted({"tool_calls": [{"name": "create_file", "arguments": {"path": "a.txt", "content": "a"}}]})
    code = run(["-C", str(ws), "-p", "make a", "--model", "x", "--output", "json"], provider_factory=factory)
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 3 and report["exit_code"] == 3 and report["status"] == "denied"
    assert report["tool_calls"] == [{"tool": "create_file", "arguments": {"path": "a.txt", "content": "a"},
                                     "ok": None, "approved": False, "decided_by": "non-interactive",
                                     "would_allow": '--yes (or approval = "edits" or "all" in config)'}]
    assert report["files_changed"] == [] and not (ws / "a.txt").exists()
    assert Path(report["trace"]).exists()
    last = captured.err.strip().splitlines()[-1]
    assert last.startswith("cli-agent: ") and "--yes" in last


def test_one_shot_yes_writes_and_reports_files_changed(ws, capsys):
    _, factory = scripted({"tool_calls": [{"name": "create_file", "arguments": {"path": "a.txt", "content": "a"}}]},
                          {"text": "made a.txt"})
    code = run(["-C", str(ws), "-p", "make a", "--model", "x", "-o", "json", "-y"], provider_factory=factory)
    report = json.loads(capsys.readouterr().out)
    assert code == 0 and report["answer"] == "made a.txt" and report["files_changed"] == ["a.txt"]
    assert report["tool_calls"][0]["approved"] is True and report["tool_calls"][0]["ok"] is True


def test_stream_json_prints_every_event(ws, capsys):
    _, factory = scripted({"text": "hi"})
    assert run(["-C", str(ws), "-p", "x", "--model", "x", "--output", "stream-json"], provider_factory=factory) == 0
    types = [json.loads(line)["type"] for line in capsys.readouterr().out.splitlines()]
    assert types[0] == "run_started" and types[-1] == "run_finished" and "model_request" in types


def test_trace_file_is_complete_and_readable(ws, tmp_path, capsys):
    _, factory = scripted({"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"text": "ok"})
    trace = tmp_path / "t.jsonl"
    assert run(["-C", str(ws), "-p", "x", "--model", "x", "--trace", str(trace)], provider_factory=factory) == 0
    loaded = read_trace(trace)
    assert loaded.header["format"] == 2
    assert [e.type for e in loaded.events][-1] == "run_finished"


def test_bad_config_file_exits_2_naming_the_file(ws, tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("max_steps = 'ten'\n")
    assert run(["-C", str(ws), "--config", str(bad), "-p", "x", "--model", "x"]) == 2
    err = capsys.readouterr().err
    assert "bad.toml" in err and "max_steps" in err and len(err.strip().splitlines()) == 1


def test_tools_list_and_json(capsys):
    assert run(["tools", "--json"]) == 0
    names = {spec["name"] for spec in json.loads(capsys.readouterr().out)}
    assert {"read_file", "edit_file", "create_file", "write_file", "delete_file", "list_files", "search"} <= names


def test_tools_run_read_and_denied_write(ws, capsys):
    (ws / "a.txt").write_text("one\ntwo\n")
    assert run(["tools", "run", "read_file", '{"path": "a.txt", "start_line": 2}', "-C", str(ws)]) == 0
    assert json.loads(capsys.readouterr().out)["data"]["content"].startswith("two")
    code = run(["tools", "run", "edit_file", '{"path": "a.txt", "old": "one", "new": "1"}', "-C", str(ws)])
    assert code == 3 and (ws / "a.txt").read_text() == "one\ntwo\n"
    capsys.readouterr()
    code = run(["tools", "run", "edit_file", '{"path": "a.txt", "old": "one", "new": "1"}', "-C", str(ws), "-y"])
    assert code == 0 and (ws / "a.txt").read_text() == "1\ntwo\n"


def test_tools_run_goes_through_the_loop_and_leaves_a_trace(ws, tmp_path, capsys):
    trace = tmp_path / "tools.jsonl"
    code = run(["--trace", str(trace), "tools", "run", "create_file", '{"path": "n.txt", "content": "N"}', "-C",
                str(ws), "-y"])
    assert code == 0 and (ws / "n.txt").read_text() == "N"
    events = read_trace(trace).events
    assert [e.type for e in events if e.type in ("approval_decided", "tool_result", "run_finished")] == [
        "approval_decided", "tool_result", "run_finished"]
    assert events[-1].stop_reason.value == "done"


@pytest.mark.parametrize(("args", "code"), [
    (["tools", "run", "nope", "{}"], 2),
    (["tools", "run", "read_file", "{bad json"], 2),
    (["tools", "run", "read_file", '{"path": 3}'], 2),
    (["tools", "run", "read_file", '{"path": "../outside"}'], 1),
])
def test_tools_run_errors(ws, capsys, args, code):
    assert run([*args, "-C", str(ws)]) == code
    assert capsys.readouterr().err.strip().count("\n") == 0


def test_prompt_command_prints_both_protocols(capsys):
    assert run(["prompt", "--protocol", "json"]) == 0
    assert '"terminate"' in capsys.readouterr().out
    assert run(["prompt", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert len(data["fingerprint"]) == 64 and data["tools"]


@pytest.mark.slow
def test_stdin_task(ws, tmp_path, isolated_home):
    script = write_script(tmp_path / "s.json", [{"text": "from stdin"}])
    result = cli_subprocess(["-C", str(ws), "--model", script, "-p", "-"], cwd=ws, home=isolated_home,
                            stdin="what is this?")
    assert result.returncode == 0 and result.stdout == "from stdin\n"


@pytest.mark.slow
@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signals_exit_with_their_code_and_a_complete_trace(ws, tmp_path, isolated_home, sig, code):
    script = write_script(tmp_path / "s.json", [{"text": "slow", "delay": 30}])
    trace = tmp_path / "t.jsonl"
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(isolated_home), "CI": "true"}
    proc = subprocess.Popen([sys.executable, "-m", "cli_agent", "-C", str(ws), "--model", script, "-p", "x",
                             "--trace", str(trace)], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if trace.exists() and "model_request" in trace.read_text():
            break
        time.sleep(0.05)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=20)
    assert proc.returncode == code, err
    events = read_trace(trace).events
    assert events[-1].type == "run_finished" and events[-1].exit_code == code

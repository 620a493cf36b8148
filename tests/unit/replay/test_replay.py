"""`cli-agent replay`: traces made through the real CLI replay exactly; edited, unknown or truncated ones don't."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from clikit import user_config

from cli_agent.cli.main import run
from cli_agent.eval.runner import snapshot
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.replay.engine import replay

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "config.ini").write_text("[server]\nport = 8000\n")
    (root / "old.txt").write_text("obsolete\n")
    return root


def call(name, **arguments):
    return {"name": name, "arguments": arguments}


class InterruptingProvider(ScriptedProvider):
    """A scripted model whose `at`-th request is interrupted by Ctrl-C."""

    def __init__(self, replies, at):
        super().__init__(replies)
        self.at = at

    def stream(self, request):
        if len(self.requests) + 1 == self.at:
            self.requests.append(request)
            raise KeyboardInterrupt
        return super().stream(request)


def record(ws: Path, tmp_path: Path, replies, *flags: str, provider=None, prompt="do it") -> tuple[Path, int]:
    """Run one task through the real CLI with --trace; returns the trace and the exit code."""
    trace = tmp_path / "trace.jsonl"
    provider = provider or ScriptedProvider(replies, native_tools="json" not in flags)
    code = run(["-C", str(ws), "-p", prompt, "--model", "scripted", "--trace", str(trace), *flags],
               provider_factory=lambda settings: provider)
    return trace, code


SESSIONS = {
    "edits": ([{"tool_calls": [call("list_files"), call("read_file", path="config.ini")]},
               {"tool_calls": [call("edit_file", path="config.ini", old="8000", new="9000"),
                               call("create_file", path="notes/a.md", content="# A\n")]},
               {"tool_calls": [call("read_file", path="old.txt")]},
               {"tool_calls": [call("write_file", path="old.txt", content="fresh\n")]},
               {"tool_calls": [call("delete_file", path="notes/a.md")]},
               {"text": "All done."}], ["-y"], 0),
    "json-protocol-with-strikes": ([{"raw": '{"tool": "read_file", "parameters": {"path": "config.ini"}'},
                                    {"raw": '{"tool": "create_file", "parameters": {"path": "b.txt", '
                                            '"content": "B"}, "terminate": true}'}], ["-y", "--protocol", "json"], 0),
    "errors-the-model-recovers-from": ([{"tool_calls": [call("nope"), call("read_file", file="x"),
                                                        {"name": "read_file", "arguments": '{"path": '}]},
                                        {"tool_calls": [call("create_file", path="../escape.txt", content="x")]},
                                        {"text": "gave up"}], ["-y"], 7),  # its last change failed: exit 7
    "denied": ([{"tool_calls": [call("read_file", path="config.ini"), call("create_file", path="c.txt", content="C"),
                                call("create_file", path="d.txt", content="D")]}], [], 3),
    "step-limit": ([{"tool_calls": [call("list_files")]}] * 3, ["--max-steps", "2"], 4),
    "timeout": ([{"tool_calls": [call("list_files")]}, {"text": "late", "delay": 5}], ["--timeout", "0.4"], 5),
    "provider-error": ([{"tool_calls": [call("list_files")]}, {"error": "fatal", "message": "boom"}], [], 1),
}


@pytest.mark.parametrize("name", SESSIONS)
def test_a_fresh_trace_replays_exactly_and_leaves_the_workspace_alone(name, ws, tmp_path, capsys):
    replies, flags, expected = SESSIONS[name]
    trace, code = record(ws, tmp_path, replies, *flags)
    assert code == expected
    after_run = snapshot(ws)
    capsys.readouterr()
    assert run(["replay", str(trace)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert "replay identical: 1 run(s)" in out
    assert "note:" not in out  # the rewind put every file back the way it was
    assert snapshot(ws) == after_run


def test_an_interrupted_run_is_interrupted_at_the_same_point(ws, tmp_path, capsys):
    provider = InterruptingProvider([{"tool_calls": [call("list_files")]}, {"text": "never"}], at=2)
    trace, code = record(ws, tmp_path, [], provider=provider)
    assert code == 130
    result = replay(trace)
    assert result.divergence is None and result.stop_reasons == ["interrupted"]


def test_replay_json_output(ws, tmp_path, capsys):
    trace, _ = record(ws, tmp_path, [{"tool_calls": [call("read_file", path="config.ini")]}, {"text": "ok"}])
    capsys.readouterr()
    assert run(["replay", str(trace), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "identical" and report["runs"] == 1 and report["tool_calls"] == 1


def edit_trace(trace: Path, change) -> Path:
    records = [json.loads(line) for line in trace.read_text().splitlines()]
    for record in records:
        change(record)
    edited = trace.with_name("edited.jsonl")
    edited.write_text("".join(json.dumps(r) + "\n" for r in records))
    return edited


def proposed_argument(record):
    if record.get("type") == "tool_calls_proposed":
        record["calls"][0]["arguments"]["path"] = "other.ini"


def recorded_result(record):
    if record.get("type") == "tool_result":
        record["envelope"] = {"ok": False, "data": None, "warnings": [], "errors": ["no such file"]}


def replied_argument(record):  # what the model said, in every place the trace holds it
    for key in ("tool_calls", "calls"):
        for c in record.get(key) or ():
            if c["name"] == "edit_file":
                c["arguments"]["new"] = "port = 9001"
                c["raw_arguments"] = json.dumps(c["arguments"])


@pytest.mark.parametrize(("change", "expected"), [
    (proposed_argument, "the recording called read_file {\"path\": \"other.ini\"}, the replay called read_file"),
    (recorded_result, "the recording got read_file failing: no such file, the replay got read_file ok"),
    (replied_argument, "the recording got edit_file ok, writing content with sha256"),
])
def test_an_edited_trace_is_divergent(change, expected, ws, tmp_path, capsys):
    trace, _ = record(ws, tmp_path, [{"tool_calls": [call("read_file", path="config.ini")]},
                                     {"tool_calls": [call("edit_file", path="config.ini", old="port = 8000",
                                                          new="port = 9000")]},
                                     {"text": "ok"}], "-y")
    edited = edit_trace(trace, change)
    capsys.readouterr()
    assert run(["replay", str(edited)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("cli-agent: replay diverged: run 1, step ")
    assert expected in err[0]


def test_a_workspace_changed_since_the_run_is_reported_at_the_first_read(ws, tmp_path, capsys):
    trace, _ = record(ws, tmp_path, [{"tool_calls": [call("read_file", path="config.ini")]}, {"text": "ok"}])
    (ws / "config.ini").write_text("[server]\nport = 1234\n")
    result = replay(trace)
    assert result.divergence is not None and "read_file" in result.divergence.message
    assert "1234" in result.divergence.message


@pytest.mark.parametrize(("damage", "message"), [
    (lambda lines: [lines[0].replace('"format": 2', '"format": 99'), *lines[1:]], "unknown trace format 99"),
    (lambda lines: lines[:-1], "truncated"),
    (lambda lines: [*lines[:2], lines[2][: len(lines[2]) // 2], *lines[3:]], "damaged line"),
    (lambda lines: [], "empty"),
])
def test_unknown_truncated_or_damaged_traces_exit_2(damage, message, ws, tmp_path, capsys):
    trace, _ = record(ws, tmp_path, [{"tool_calls": [call("list_files")]}, {"text": "ok"}])
    trace.write_text("".join(line + "\n" for line in damage(trace.read_text().splitlines())))
    capsys.readouterr()
    assert run(["replay", str(trace)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and message in err[0]


def test_a_trace_whose_workspace_is_gone_exits_2(ws, tmp_path, capsys):
    trace, _ = record(ws, tmp_path, [{"text": "ok"}])
    ws.rename(tmp_path / "moved")
    assert run(["replay", str(trace)]) == 2
    assert "is not a folder any more" in capsys.readouterr().err


def test_replay_cannot_reach_the_original_through_an_absolute_link(ws, tmp_path):
    os.symlink(ws / "config.ini", ws / "link.ini")
    trace, code = record(ws, tmp_path, [{"tool_calls": [call("read_file", path="link.ini")]},
                                        {"tool_calls": [call("write_file", path="link.ini", content="port = 1\n")]},
                                        {"text": "ok"}], "-y")
    assert code == 0 and (ws / "config.ini").read_text() == "port = 1\n"
    before = snapshot(ws)
    result = replay(trace)
    assert result.divergence is None and not result.notes
    assert snapshot(ws) == before


@pytest.mark.parametrize("name", [s.name for s in __import__("cli_agent.eval.scenarios", fromlist=["x"])
                                  .load_scenarios()])
def test_every_offline_eval_scenario_replays_exactly(name, tmp_path):
    from cli_agent.eval.runner import run_scenario
    from cli_agent.eval.scenarios import load_scenarios

    scenario = next(s for s in load_scenarios() if s.name == name)
    assert run_scenario(scenario, tmp_path).passed
    result = replay(tmp_path / "trace.jsonl")
    assert result.divergence is None, result.divergence
    assert not result.notes


# -- a trace from someone else is code: replay runs no command unless told to --------------------------------------


def command_session(ws: Path, tmp_path: Path, marker: Path) -> Path:
    trace, code = record(ws, tmp_path, [{"tool_calls": [call("run_command", command=f"touch {marker} && echo hi")]},
                                        {"tool_calls": [call("read_file", path="config.ini")]},
                                        {"text": "ok"}], "-y")
    assert code == 0 and marker.exists()  # the recording ran it (unsandboxed: the user's own opt-out)
    marker.unlink()
    return trace


@pytest.mark.slow  # the recording runs a command
def test_replay_plays_a_trace_s_commands_back_instead_of_running_them(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, 'sandbox = "off"\n')  # commands would run on the host itself
    marker = tmp_path / "ran-on-the-host"
    trace = command_session(ws, tmp_path, marker)
    capsys.readouterr()
    assert run(["replay", str(trace)]) == 0, capsys.readouterr()
    out = capsys.readouterr().out
    assert not marker.exists(), "replay ran the trace's command"
    assert "replay identical: 1 run(s), 2 tool call(s)" in out
    assert "1 command(s) played back from the trace, not run" in out
    assert run(["replay", str(trace), "--output", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "identical" and report["commands"] == {"run": False, "played_back": 1}


@pytest.mark.slow  # the recording runs a command
def test_run_commands_is_refused_without_the_command_sandbox(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, 'sandbox = "off"\n')
    marker = tmp_path / "ran-on-the-host"
    trace = command_session(ws, tmp_path, marker)
    capsys.readouterr()
    assert run(["replay", str(trace), "--run-commands"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "only in the command sandbox" in err[0]
    assert not marker.exists()


@pytest.mark.slow  # the recording runs a command
def test_an_edited_command_is_replayed_as_written_never_run(ws, tmp_path, isolated_home, capsys):
    user_config(isolated_home, 'sandbox = "off"\n')
    marker = tmp_path / "ran-on-the-host"
    trace = command_session(ws, tmp_path, marker)
    evil = tmp_path / "evil"

    def swap(record):
        for key in ("tool_calls", "calls"):
            for c in record.get(key) or ():
                if c["name"] == "run_command":
                    c["arguments"]["command"] = f"touch {evil}"
                    c["raw_arguments"] = json.dumps(c["arguments"])

    edited = edit_trace(trace, swap)
    capsys.readouterr()
    assert run(["replay", str(edited)]) == 0  # the model's call is replayed as the file says; it does not run
    assert not evil.exists() and not marker.exists()


@pytest.mark.slow  # the recording runs a command
def test_run_commands_runs_them_in_the_sandbox_on_the_copy(ws, tmp_path, capsys):
    trace, code = record(ws, tmp_path, [{"tool_calls": [call("run_command", command="echo made > made.txt")]},
                                        {"tool_calls": [call("read_file", path="made.txt")]},
                                        {"text": "ok"}], "-y")
    assert code == 0 and (ws / "made.txt").read_text() == "made\n"
    after_run = snapshot(ws)
    capsys.readouterr()
    assert run(["replay", str(trace), "--run-commands", "--output", "json"]) == 0, capsys.readouterr()
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "identical" and report["commands"] == {"run": True, "played_back": 0}
    assert snapshot(ws) == after_run
    # played back instead, the command's file is not in the copy: the read says so, and the hint names the flag
    assert run(["replay", str(trace)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "read_file" in err[0] and "--run-commands runs them" in err[0]


def test_a_trace_naming_the_home_folder_is_refused(ws, tmp_path, capsys, monkeypatch):
    trace, _ = record(ws, tmp_path, [{"text": "ok"}])
    home = tmp_path / "home-of-the-user"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    edited = edit_trace(trace, lambda r: r.update(workspace=str(home)) if r.get("format") else None)
    capsys.readouterr()
    assert run(["replay", str(edited)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "replay copies a project's folder" in err[0]
    from cli_agent.contracts.errors import TraceError
    from cli_agent.replay.engine import _refuse_broad

    for broad in (Path("/"), home, tmp_path):  # the root, the home folder, a folder above it
        with pytest.raises(TraceError):
            _refuse_broad(trace, broad)
    _refuse_broad(trace, home / "project")  # a project inside it is what replay is for

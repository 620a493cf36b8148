"""Prompt plans: `cli-agent prompt --json` prints the fingerprint the trace records for the same inputs."""

from __future__ import annotations

import json

import pytest

from cli_agent.cli.main import run
from cli_agent.facts.store import FactStore
from cli_agent.history.trace import read_trace
from cli_agent.prompt.builder import plan_fingerprint
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("print('hi')\n")
    (root / "AGENTS.md").write_text("Be brief.\n")
    return root


def script(tmp_path, replies, **options):
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"replies": replies, **options}))
    return f"scripted:{path}"


def traced_fingerprints(ws, tmp_path, capsys, args):
    trace = tmp_path / "run.jsonl"
    assert run(["-C", str(ws), "--trace", str(trace), *args]) == 0
    capsys.readouterr()
    return [e.fingerprint for e in read_trace(trace).events if e.type == "model_request"]


def prompt_json(ws, capsys, args):
    assert run(["prompt", "--json", "-C", str(ws), *args]) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("task", "protocol_args", "native", "protocol"), [
    ("Read app.py and tell me what it prints.", [], True, "native"),
    ("Remember: we use tabs. Read app.py.", [], True, "native"),  # an optional tool joins the plan
    ("Read app.py and tell me what it prints.", [], False, "json"),  # auto asks the provider
    ("Read app.py and tell me what it prints.", ["--protocol", "json"], True, "json"),
])
def test_prompt_json_prints_the_fingerprint_the_trace_records(ws, tmp_path, capsys, task, protocol_args, native,
                                                              protocol):
    FactStore(ws).propose("Indent with tabs.", "the user said")
    FactStore(ws).commit("f1", author="me")
    read = {"name": "read_file", "arguments": {"path": "app.py"}}
    if native:
        replies = [{"tool_calls": [read]}, {"text": "It prints hi."}]
    else:
        replies = [{"raw": json.dumps({"tool": "read_file", "parameters": {"path": "app.py"}, "terminate": False})},
                   {"text": "It prints hi."}]
    model = script(tmp_path, replies, native_tools=native)
    traced = traced_fingerprints(ws, tmp_path, capsys, ["-p", task, "--model", model, *protocol_args])
    assert len(traced) == 2 and len(set(traced)) == 1  # one plan per run

    shown = prompt_json(ws, capsys, ["--task", task, "--model", model, *protocol_args])
    assert shown["fingerprint"] == traced[0]
    assert shown["protocol"] == protocol and shown["options"]["protocol"] == protocol
    assert shown["options"]["model"] == model
    assert ("tool_choice" in shown["options"]) == (protocol == "native")
    assert "- Indent with tabs." in shown["system"]
    assert ("propose_fact" in shown["system"]) == ("Remember" in task)
    schemas = shown["tools"] if protocol == "native" else []
    assert plan_fingerprint(shown["system"], schemas, shown["options"]) == shown["fingerprint"]


def test_options_carry_the_temperature_and_change_the_fingerprint(ws, tmp_path, capsys):
    model = script(tmp_path, [{"text": "hi"}])
    plain = prompt_json(ws, capsys, ["--task", "x", "--model", model])
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("temperature = 0.2\n")
    warm = prompt_json(ws, capsys, ["--task", "x", "--model", model])
    assert warm["options"]["temperature"] == 0.2 and "temperature" not in plain["options"]
    assert warm["fingerprint"] != plain["fingerprint"]
    assert traced_fingerprints(ws, tmp_path, capsys, ["-p", "x", "--model", model]) == [warm["fingerprint"]]


def test_committing_a_fact_changes_the_plan_and_a_proposal_does_not_reach_the_prompt(ws, tmp_path, capsys):
    model = script(tmp_path, [{"text": "hi"}])
    before = prompt_json(ws, capsys, ["--task", "x", "--model", model])
    FactStore(ws).propose("Indent with tabs.", "why")
    pending = prompt_json(ws, capsys, ["--task", "x", "--model", model])
    assert "Indent with tabs." not in pending["system"]
    FactStore(ws).commit("f1")
    after = prompt_json(ws, capsys, ["--task", "x", "--model", model])
    assert "- Indent with tabs." in after["system"] and after["fingerprint"] != before["fingerprint"]


def test_with_an_injected_provider_the_trace_and_the_scripted_model_file_agree(ws, tmp_path, capsys):
    """The injected factory is the test's seam; the recorded plan is the same as the file-based one's."""
    model = script(tmp_path, [{"text": "hi"}])
    provider = ScriptedProvider([{"text": "hi"}])
    trace = tmp_path / "injected.jsonl"
    assert run(["-C", str(ws), "--trace", str(trace), "-p", "x", "--model", model],
               provider_factory=lambda s: provider) == 0
    capsys.readouterr()
    traced = [e.fingerprint for e in read_trace(trace).events if e.type == "model_request"]
    assert traced == [prompt_json(ws, capsys, ["--task", "x", "--model", model])["fingerprint"]]


def test_with_no_model_both_sides_plan_for_the_bundled_local_model(ws, tmp_path, capsys, monkeypatch):
    from cli_agent.providers.local.provider import KEY_VARIABLES

    for name in KEY_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    provider = ScriptedProvider([{"raw": "It prints hi."}], native_tools=False)
    trace = tmp_path / "local.jsonl"
    assert run(["-C", str(ws), "--trace", str(trace), "-p", "x"], provider_factory=lambda s: provider) == 0
    capsys.readouterr()
    traced = [e.fingerprint for e in read_trace(trace).events if e.type == "model_request"]
    shown = prompt_json(ws, capsys, ["--task", "x"])
    assert shown["options"]["model"] == "local" and shown["protocol"] == "json"
    assert traced == [shown["fingerprint"]]

"""`cli-agent eval`: the offline suite passes and reports valid JSON; its checks bite; the live path runs real
tasks against a fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import dataclasses
import json
import os

import pytest

from cli_agent.cli.main import run
from cli_agent.eval.runner import run_scenario
from cli_agent.eval.scenarios import Expect, load_live_tasks, load_scenarios
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer


@pytest.fixture(autouse=True)
def home(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("CI", "true")
    for name in list(os.environ):
        if name.startswith("CLI_AGENT_") and name != "CLI_AGENT_HOME":
            monkeypatch.delenv(name)
    return tmp_path / "home"


REQUIRED = ["single-call", "chained-calls", "json-terminate-false", "json-terminate-true", "text-answer",
            "unknown-tool", "bad-arguments", "malformed-json-recovers", "malformed-json-three-strikes", "step-limit",
            "timeout", "denied-non-interactive", "several-calls-one-turn", "escape-dotdot", "escape-absolute",
            "escape-symlink", "lock-from-facts", "lock-from-config", "propose-fact", "create-app",
            "read-then-update", "recover-from-refused-path"]


def test_the_offline_suite_passes_and_writes_a_json_report(tmp_path, capsys):
    report = tmp_path / "report.json"
    assert run(["eval", "--report", str(report)]) == 0, capsys.readouterr().out
    out = capsys.readouterr().out
    assert "scenarios passed" in out and f"report: {report}" in out
    data = json.loads(report.read_text())
    assert data["kind"] == "offline" and data["failed"] == 0 and data["passed"] >= 20
    names = [s["name"] for s in data["scenarios"]]
    assert set(REQUIRED) <= set(names)
    assert all(s["passed"] and not s["failures"] for s in data["scenarios"])


def test_the_default_report_goes_to_the_user_state_dir(home, capsys):
    assert run(["eval", "--only", "single-call"]) == 0
    reports = list((home / "state" / "eval").glob("report-*.json"))
    assert len(reports) == 1 and json.loads(reports[0].read_text())["passed"] == 1


def scenario(name):
    return next(s for s in load_scenarios() if s.name == name)


@pytest.mark.parametrize(("name", "expect", "failure"), [
    ("single-call", {"files": {"notes.txt": "bye\n"}}, "file notes.txt"),
    ("single-call", {"exit_code": 3}, "exit_code: expected 3, got 0"),
    ("chained-calls", {"requests": 4}, "requests: expected 4, got 5"),
    ("unknown-tool", {"told": [{"request": 2, "contains": "no such thing"}]}, "was not told"),
    ("denied-non-interactive", {"absent": ["never.txt"], "results": ["create_file:ok"]}, "results"),
    ("propose-fact", {"pending_facts": 0}, "pending_facts: expected 0, got 1"),
    ("step-limit", {"replies_left": 0}, "replies_left"),
])
def test_the_checks_bite(name, expect, failure):
    base = scenario(name)
    result = run_scenario(dataclasses.replace(base, expect=dataclasses.replace(base.expect, **expect)))
    assert not result.passed
    assert any(failure in f for f in result.failures), result.failures


def test_a_failing_suite_exits_1(tmp_path, capsys, monkeypatch):
    import cli_agent.eval.command as scenarios  # the command reads the suite through its own name

    broken = dataclasses.replace(scenario("text-answer"), expect=Expect(answer_contains="43"))
    monkeypatch.setattr(scenarios, "load_scenarios", lambda only=None: [broken])
    report = tmp_path / "r.json"
    assert run(["eval", "--report", str(report)]) == 1
    assert "1 of 1 offline scenarios failed: text-answer" in capsys.readouterr().err
    assert json.loads(report.read_text())["failed"] == 1


def test_nothing_outside_the_workspace_is_touched_is_checked(tmp_path):
    """A scenario whose model writes outside through a link the sandbox doesn't guard would fail: the runner
    compares the outside folder before and after (here a write that the sandbox refuses leaves it intact)."""
    result = run_scenario(scenario("escape-symlink"))
    assert result.passed and "something outside" not in " ".join(result.failures)


# -- live, against a fake OpenAI-compatible server ----------------------------------------------------------------

def tool(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


LIVE_REPLIES = [
    tool("create_file", path="hello.py", content="print('hello')\n"), {"text": "Created hello.py."},
    tool("read_file", path="calc.py"), tool("edit_file", path="calc.py", old="return a - b", new="return a + b"),
    {"text": "Fixed."},
    tool("read_file", file="config/server.ini"),  # an invalid call: the schema wants path
    tool("read_file", path="config/server.ini"), {"text": "8417"},
]


@pytest.mark.slow
def test_live_eval_against_a_fake_server(tmp_path, capsys):
    assert [t.name for t in load_live_tasks()] == ["create-hello", "fix-bug", "answer-from-files"]
    report, markdown = tmp_path / "live.json", tmp_path / "live.md"
    with FakeOpenAIServer(LIVE_REPLIES) as server:
        code = run(["eval", "--models", "openai/test", "--api-base", server.url, "--report", str(report),
                    "--markdown", str(markdown)])
        assert server.pending == 0
    assert code == 0, capsys.readouterr()
    data = json.loads(report.read_text())
    model = data["models"][0]
    assert model["model"] == "openai/test" and model["tasks_passed"] == 3 and model["tasks"] == 3
    assert model["tool_calls"] == 5 and model["valid_tool_call_rate"] == pytest.approx(4 / 5)
    assert model["steps"] == 8 and model["malformed_replies"] == 0 and model["tokens"] > 0
    assert "| openai/test | 3/3 | 4/5 (80%) |" in markdown.read_text()
    assert "openai/test" in capsys.readouterr().out


@pytest.mark.slow
def test_live_eval_reports_a_failed_task(tmp_path, capsys):
    replies = [tool("create_file", path="hello.py", content="print('HELLO')\n"), {"text": "Done."}]
    with FakeOpenAIServer(replies) as server:
        code = run(["eval", "--models", "openai/test", "--api-base", server.url, "--only", "hello",
                    "--report", str(tmp_path / "r.json")])
    assert code == 1
    captured = capsys.readouterr()
    assert "printed 'HELLO', not 'hello'" in captured.out and "1 live task(s) failed" in captured.err


def test_live_eval_names_the_missing_key(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    report = tmp_path / "r.json"
    code = run(["eval", "--models", "openai/a,openai/b", "--api-base", "https://models.example.invalid/v1",
                "--report", str(report)])
    assert code == 2
    captured = capsys.readouterr()
    assert "OPENAI_API_KEY" in captured.err and len(captured.err.strip().splitlines()) == 1
    models = json.loads(report.read_text())["models"]
    assert all(m["missing_credentials"] and "OPENAI_API_KEY" in m["note"] for m in models)


def test_markdown_needs_models(capsys):
    assert run(["eval", "--markdown", "x.md"]) == 2

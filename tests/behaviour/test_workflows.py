"""Workflows through the real CLI with the scripted provider: every built-in, the headless contract, listing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

import pytest

from cli_agent.cli.main import run
from cli_agent.providers.scripted import ScriptedProvider

READ_ONLY = {"list_files", "read_file", "search"}


pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    return root


class Factory:
    """A provider factory that records whether it was called at all."""

    def __init__(self, *replies):
        self.provider = ScriptedProvider(list(replies))
        self.calls = 0

    def __call__(self, settings):
        self.calls += 1
        return self.provider

    @property
    def requests(self):
        return self.provider.requests


def call(name, **arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def wf(ws, name, *args, factory, flags=()):
    return run(["workflow", "run", name, *args, "-C", str(ws), "--model", "scripted", *flags],
               provider_factory=factory)


def offered(request):
    return {schema["function"]["name"] for schema in request.tools or ()}


def first_prompt(factory):
    return next(m.content for m in factory.requests[0].messages if m.role == "user")


def tool_results(request):
    return [m.content for m in request.messages if m.role == "tool"]


def project_workflow(ws, filename, text):
    folder = ws / ".cli-agent" / "workflows"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text(textwrap.dedent(text))


# -- the built-ins --------------------------------------------------------------------------------------------------

def test_explain_reads_with_read_only_tools_and_answers(ws, capsys):
    factory = Factory(call("read_file", path="src/calc.py"), {"text": "add() returns the sum."})
    assert wf(ws, "explain", "src/calc.py", "the", "return", "value", factory=factory) == 0
    assert capsys.readouterr().out.strip() == "add() returns the sum."
    assert offered(factory.requests[0]) == READ_ONLY
    prompt = first_prompt(factory)
    assert "Explain src/calc.py" in prompt and "the return value" in prompt and "{{" not in prompt
    assert "def add" in tool_results(factory.requests[1])[0]


def test_review_defaults_to_the_workspace_and_cannot_write(ws):
    factory = Factory(call("create_file", path="fix.py", content="x"), {"text": "No major problems."})
    assert wf(ws, "review", factory=factory, flags=["--yes"]) == 0
    assert offered(factory.requests[0]) == READ_ONLY
    assert "Review the code in ." in first_prompt(factory)
    result = json.loads(tool_results(factory.requests[1])[0])
    assert result["ok"] is False and "unknown tool 'create_file'" in result["errors"][0]
    assert not (ws / "fix.py").exists()


def test_add_tests_writes_a_test_file_after_approval(ws):
    test = "from src.calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    factory = Factory(call("read_file", path="src/calc.py"), call("create_file", path="tests/test_calc.py",
                                                                  content=test), {"text": "Added tests/test_calc.py."})
    assert wf(ws, "add-tests", "src/calc.py", factory=factory, flags=["-y"]) == 0
    assert (ws / "tests" / "test_calc.py").read_text() == test
    assert {"create_file", "edit_file"} <= offered(factory.requests[0]) and "delete_file" not in offered(
        factory.requests[0])


def test_add_tests_without_yes_is_denied_headless(ws, capsys):
    factory = Factory(call("create_file", path="tests/test_calc.py", content="x"))
    assert wf(ws, "add-tests", "src/calc.py", factory=factory) == 3
    assert "--yes" in capsys.readouterr().err.strip().splitlines()[-1]
    assert not (ws / "tests").exists()


def test_refactor_takes_path_and_goal(ws):
    factory = Factory(call("edit_file", path="src/calc.py", old="a + b", new="sum((a, b))"), {"text": "Done."})
    assert wf(ws, "refactor", "src/calc.py", "goal=use sum()", factory=factory, flags=["-y"]) == 0
    assert "sum((a, b))" in (ws / "src" / "calc.py").read_text()
    assert "Refactor src/calc.py with this goal: use sum()" in first_prompt(factory)


def test_document_edits_the_file(ws):
    factory = Factory(call("edit_file", path="src/calc.py", old="def add(a, b):\n",
                           new='def add(a, b):\n    """The sum of a and b."""\n'), {"text": "Documented add()."})
    assert wf(ws, "document", "src/calc.py", factory=factory, flags=["-y"]) == 0
    assert '"""The sum of a and b."""' in (ws / "src" / "calc.py").read_text()
    assert "delete_file" not in offered(factory.requests[0]) and "write_file" not in offered(factory.requests[0])


def test_init_lists_the_project_then_writes_agents_md(ws, capsys):
    factory = Factory(call("create_file", path="AGENTS.md", content="# calc\n"), {"text": "Wrote AGENTS.md."})
    assert wf(ws, "init", factory=factory, flags=["-y", "-o", "json"]) == 0
    assert (ws / "AGENTS.md").read_text() == "# calc\n"
    notes = [m.content for m in factory.requests[0].messages if m.role == "user"]
    assert notes[0].startswith("(The workflow ran list_files") and "src/calc.py" in notes[0]
    report = json.loads(capsys.readouterr().out)
    assert report["status"] == "done" and report["workflow"] == "init" and report["files_changed"] == ["AGENTS.md"]
    assert [c["tool"] for c in report["tool_calls"]] == ["list_files", "create_file"]
    assert report["steps"] == 2  # model requests, over both steps


def test_init_without_approval_writes_nothing(ws):
    factory = Factory(call("create_file", path="AGENTS.md", content="# calc\n"))
    assert wf(ws, "init", factory=factory) == 3
    assert not (ws / "AGENTS.md").exists()


def test_new_file_creates_it_from_the_description(ws):
    factory = Factory(call("create_file", path="src/sub.py", content="def sub(a, b):\n    return a - b\n"),
                      {"text": "Created src/sub.py."})
    assert wf(ws, "new-file", "src/sub.py", "a", "sub", "function", factory=factory, flags=["-y"]) == 0
    assert (ws / "src" / "sub.py").exists()
    assert "Create the new file src/sub.py: a sub function" in first_prompt(factory)


@pytest.mark.slow
def test_a_builtin_runs_in_a_subprocess_with_a_scripted_model(ws, tmp_path, isolated_home):
    script = tmp_path / "script.json"
    script.write_text(json.dumps([call("read_file", path="src/calc.py"), {"text": "It adds."}]))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")}
    env |= {"CLI_AGENT_HOME": str(isolated_home), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run([sys.executable, "-m", "cli_agent", "workflow", "run", "explain", "path=src/calc.py",
                           "--model", f"scripted:{script}"], cwd=ws, env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "It adds."


# -- the headless contract ------------------------------------------------------------------------------------------

def test_a_missing_param_exits_2_before_any_model_call(ws, capsys):
    factory = Factory({"text": "never"})
    assert wf(ws, "refactor", "src/calc.py", factory=factory) == 2
    last = capsys.readouterr().err.strip().splitlines()[-1]
    assert "missing parameter(s): goal (string, required)" in last and "usage: refactor PATH GOAL" in last
    assert factory.requests == [] and factory.calls == 0


@pytest.mark.parametrize(("args", "reason"), [
    (["../outside"], "path: ../outside climbs out of the workspace"),
    (["src/nope.py"], "path: src/nope.py does not exist"),
])
def test_an_invalid_param_exits_2_before_any_model_call(ws, capsys, args, reason):
    factory = Factory({"text": "never"})
    assert wf(ws, "explain", *args, factory=factory) == 2
    assert reason in capsys.readouterr().err and factory.calls == 0


def test_an_unknown_workflow_exits_2_naming_the_available_ones(ws, capsys):
    assert wf(ws, "deploy", factory=Factory()) == 2
    assert "unknown workflow 'deploy'; available: add-tests, document, explain" in capsys.readouterr().err


TOOL_STEP = """
name = "greet"
title = "Greet"
description = "Write a greeting file, then talk about it."
category = "Mine"

[[params]]
name = "path"
type = "path"
required = true

[[steps]]
tool = "create_file"

[steps.arguments]
path = "{{path}}"
content = "hello"

[[steps]]
prompt = "Say what is in {{path}}."
"""


def test_a_tool_step_denied_headless_without_yes_exits_3(ws, capsys):
    project_workflow(ws, "greet.toml", TOOL_STEP)
    factory = Factory({"text": "never"})
    assert wf(ws, "greet", "hello.txt", factory=factory) == 3
    assert not (ws / "hello.txt").exists() and factory.requests == []
    assert "create_file needs approval" in capsys.readouterr().err.strip().splitlines()[-1]


def test_a_tool_step_runs_through_the_dispatcher_and_the_conversation_carries_on(ws, capsys):
    project_workflow(ws, "greet.toml", TOOL_STEP)
    factory = Factory({"text": "It says hello."})
    assert wf(ws, "greet", "hello.txt", factory=factory, flags=["--yes"]) == 0
    assert (ws / "hello.txt").read_text() == "hello"
    users = [m.content for m in factory.requests[0].messages if m.role == "user"]
    assert users[0].startswith("(The workflow ran create_file")
    assert users[1].startswith("Say what is in hello.txt.\n\nThe task names these files")  # and its lines
    assert capsys.readouterr().out.strip() == "It says hello."


def test_a_failing_step_ends_the_workflow(ws, capsys):
    project_workflow(ws, "greet.toml", TOOL_STEP)
    (ws / "hello.txt").write_text("already here")
    factory = Factory({"text": "never"})
    assert wf(ws, "greet", "hello.txt", factory=factory, flags=["--yes"]) == 1
    assert "the tool step create_file failed" in capsys.readouterr().err and factory.requests == []


def test_prompt_steps_share_one_conversation(ws, capsys):
    project_workflow(ws, "two.toml", """
        description = "Two steps"
        [[params]]
        name = "times"
        type = "int"
        default = 2
        [[steps]]
        prompt = "Count to {{times}}."
        [[steps]]
        prompt = "Now backwards."
    """)
    factory = Factory({"text": "1 2"}, {"text": "2 1"})
    assert wf(ws, "two", factory=factory, flags=["-o", "json"]) == 0
    second = [(m.role, m.content) for m in factory.requests[1].messages if m.role != "system"]
    assert second == [("user", "Count to 2."), ("assistant", "1 2"), ("user", "Now backwards.")]
    report = json.loads(capsys.readouterr().out)  # one object for the whole workflow
    assert report["answer"] == "2 1" and report["steps"] == 2 and report["arguments"] == {"times": 2}


def test_workflows_never_reach_the_model(ws):
    factory = Factory({"text": "ok"})
    assert wf(ws, "explain", "src", factory=factory) == 0
    request = factory.requests[0]
    text = " ".join(m.content or "" for m in request.messages if m.role == "system")
    assert not offered(request) & {"explain", "review", "init", "new-file", "add-tests", "refactor", "document"}
    assert "new-file" not in text and "add-tests" not in text


# -- listing --------------------------------------------------------------------------------------------------------

def test_workflows_lists_by_category_with_params_files_and_shadows(ws, capsys, isolated_home):
    project_workflow(ws, "explain.toml", """
        title = "My explain"
        description = "The project's own explain."
        category = "Understand"
        [[steps]]
        prompt = "x"
    """)
    assert run(["--trust", "workflows", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert out.index("Understand:") < out.index("Change:") < out.index("Project:")
    assert "  refactor PATH GOAL\n" in out and "- goal (string, required): What the refactoring" in out
    assert f"from project: {ws / '.cli-agent' / 'workflows' / 'explain.toml'}" in out
    assert "shadows builtin_workflows/explain.toml" in out
    assert "read_file" not in out.replace("from built-in", "")  # tools are not workflows


def test_workflows_check_exits_2_when_a_file_is_broken(ws, capsys):
    project_workflow(ws, "good.toml", 'description = "Fine"\n[[steps]]\nprompt = "x"\n')
    project_workflow(ws, "bad.toml", 'description = "Bad"\n[[steps]]\nprompt = "see {{file}}"\n')
    assert run(["workflows", "-C", str(ws)]) == 0
    captured = capsys.readouterr()
    assert "  good\n" in captured.out and "bad.toml:3: steps[0].prompt: {{file}} names no parameter" in captured.err
    assert run(["workflows", "--check", "-C", str(ws)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert "bad.toml" in err[0] and err[-1] == "cli-agent: 1 workflow file(s) are broken (listed above)"


def test_workflows_check_passes_on_the_builtins(ws, capsys):
    assert run(["workflows", "--check", "-C", str(ws)]) == 0
    assert "8 workflow(s) load." in capsys.readouterr().out


def test_ctrl_c_in_a_front_end_finishes_the_step_and_ends_the_workflow(ws):
    from cli_agent.config.settings import Settings
    from cli_agent.contracts.events import ModelRequest, RunFinished, StopReason
    from cli_agent.session.session import drive, open_session
    from cli_agent.workflows.files import load_workflows
    from cli_agent.workflows.run import run_workflow

    factory = Factory({"text": "never seen"})
    session = open_session(Settings(model="scripted", workspace=str(ws), trace=str(ws.parent / "t.jsonl")),
                           interactive=False, provider_factory=factory)
    seen = []

    def sink(event):
        seen.append(event)
        if isinstance(event, ModelRequest):
            raise KeyboardInterrupt

    try:
        workflow = load_workflows(session.workspace).get("review")
        finished = drive(run_workflow(session, workflow, {"path": ".", "focus": None}, None), sink)
    finally:
        session.close()
    assert finished.stop_reason is StopReason.INTERRUPTED
    assert [e for e in seen if isinstance(e, RunFinished)] == [finished]

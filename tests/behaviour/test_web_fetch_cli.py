"""web_fetch from the command line: a scripted model fetches a page of a loopback server the test starts, the
user's config allowing private addresses; a project's config cannot allow them; approval is asked, and "a"
grants the site for the session."""

from __future__ import annotations

import json

import pytest
from agentkit import Answers, call, run
from clikit import cli, user_config
from webkit import web_server

from cli_agent.config.settings import Settings, WebSettings
from cli_agent.contracts.events import ApprovalAsked, Decision, ToolResult
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.builder import agent_for, dispatcher_for
from cli_agent.tools.registry import Registry

pytestmark = pytest.mark.usefixtures("isolated_home")


def _script(path, *urls):
    replies = [{"tool_calls": [call("web_fetch", url=url)]} for url in urls] + [{"text": "It is version 2.0."}]
    path.write_text(json.dumps(replies))
    return f"scripted:{path}"


@pytest.mark.slow
def test_a_run_fetches_a_page_when_the_user_config_allows_local_addresses(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "[web]\nallow_private = true\n")
    with web_server() as (base, hits):
        done = cli(["-C", str(ws), "-p", "which version?", "--model", _script(tmp_path / "s.json", f"{base}/page"),
                    "--yes", "--output", "json"], home=home)
    report = json.loads(done.stdout)
    assert done.returncode == 0, done.stderr
    assert report["answer"] == "It is version 2.0." and hits == ["/page"]
    assert report["tool_calls"][0]["tool"] == "web_fetch" and report["tool_calls"][0]["ok"] is True


@pytest.mark.slow
def test_a_project_config_cannot_allow_local_addresses_even_when_trusted(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text("[web]\nallow_private = true\n")
    with web_server() as (base, hits):
        done = cli(["-C", str(ws), "-p", "which version?", "--model", _script(tmp_path / "s.json", f"{base}/page"),
                    "--yes", "--trust", "--output", "json"], home=home)
    report = json.loads(done.stdout)
    assert hits == [] and report["tool_calls"][0]["ok"] is False
    assert "web" in done.stderr + json.dumps(report.get("notes", []))  # said: ignored, user config only


@pytest.mark.slow
def test_without_yes_a_fetch_is_denied_when_no_one_can_be_asked(tmp_path, ws):
    home = tmp_path / "home"
    user_config(home, "[web]\nallow_private = true\n")  # the address may be reached: approval is what refuses it
    with web_server() as (base, hits):
        done = cli(["-C", str(ws), "-p", "x", "--model", _script(tmp_path / "s.json", f"{base}/page")], home=home)
    assert done.returncode == 3 and hits == [] and "web_fetch needs approval" in done.stderr


def _agent(ws, replies):
    """An agent as a session builds it, with the user's `[web] allow_private = true`; someone can be asked."""
    settings = Settings(model="scripted", workspace=str(ws), web=WebSettings(allow_private=True), task_files=False,
                        repo_map=False)
    workspace = Workspace(ws)
    dispatcher = dispatcher_for(settings, workspace, Registry.builtin())
    return agent_for(settings, workspace, ScriptedProvider(replies), "native", dispatcher, interactive=True)


def test_all_grants_the_site_for_the_session_and_no_other(ws):
    with web_server() as (base, hits):
        other = base.replace("127.0.0.1", "localhost")
        agent = _agent(ws, [{"tool_calls": [call("web_fetch", url=f"{base}/page")]},
                            {"tool_calls": [call("web_fetch", url=f"{base}/json")]},
                            {"tool_calls": [call("web_fetch", url=f"{other}/text")]},
                            {"text": "done"}])
        events, finished = run(agent, "read them", Answers(Decision.ALL, Decision.YES))
    asked = [e for e in events if isinstance(e, ApprovalAsked)]
    assert [a.call.arguments["url"] for a in asked] == [f"{base}/page", f"{other}/text"]
    assert asked[0].scope == "127.0.0.1" and asked[1].scope == "localhost"
    assert [e.envelope.ok for e in events if isinstance(e, ToolResult)] == [True, True, True]
    assert hits == ["/page", "/json", "/text"] and finished.answer == "done"

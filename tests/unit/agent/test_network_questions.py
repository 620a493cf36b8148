"""A running command's first connection to a host no rule allows is asked about while it runs, through the
approval seam the front end injects: a/t opens the host for the session, n refuses it (the result says so); no
approval mode opens a host; every connection is a NetworkConnection event under the command's call."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import pytest
from agentkit import Answers, call, run
from netkit import INDEX_HOST, IndexServer, pip_download, wheel_index

from cli_agent.config.settings import Settings
from cli_agent.contracts import Decision, NetworkConnection, ToolResult
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.builder import agent_for, dispatcher_for
from cli_agent.tools import command_setup
from cli_agent.tools.registry import Registry

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]


@pytest.fixture
def index(tmp_path: Path) -> Iterator[IndexServer]:
    server = IndexServer(wheel_index(tmp_path / "index"), INDEX_HOST)
    yield server
    server.close()


def _fetch(tmp_path: Path, index: IndexServer, answers: Answers, *, interactive: bool,
           approval: Literal["ask", "all"] = "ask", yes: bool = False) -> tuple[list[object], dict[str, Any]]:
    """A session's agent, its commands in the sandbox with the session's network (no rule), running pip."""
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(model="scripted", workspace=str(ws), approval=approval, yes=yes, task_files=False,
                        repo_map=False)
    workspace = Workspace(ws)
    commands = command_setup(settings, workspace)
    assert commands is not None and commands.net is not None
    provider = ScriptedProvider([{"tool_calls": [call("run_command", command=pip_download(index.port))]},
                                 {"text": "done"}], native_tools=True)
    dispatcher = dispatcher_for(settings, workspace, Registry.builtin(), commands=commands)
    agent = agent_for(settings, workspace, provider, "native", dispatcher, interactive=interactive)
    try:
        events, _ = run(agent, "fetch it", answers)
    finally:
        commands.net.close()
    result = next(e for e in events if isinstance(e, ToolResult))
    return list(events), dict(result.envelope.data)


def test_a_host_granted_for_the_session_is_reached(tmp_path: Path, index: IndexServer) -> None:
    answers = Answers(Decision.ALL)
    events, data = _fetch(tmp_path, index, answers, interactive=True)
    assert [a.scope for a in answers.asked] == [f"{INDEX_HOST}:{index.port}"]  # asked once: then the session's
    assert "tinypkg-1.0-py3-none-any.whl" in data["output"].splitlines()[-1], data["output"]
    seen = [e for e in events if isinstance(e, NetworkConnection)]
    assert seen and all(e.allowed for e in seen)
    assert seen[0].why == "allowed by the user (session)"


def test_a_host_refused_by_the_user_is_not_reached_and_the_result_says_so(tmp_path: Path, index: IndexServer
                                                                         ) -> None:
    answers = Answers(Decision.NO, Decision.NO, Decision.NO)
    events, data = _fetch(tmp_path, index, answers, interactive=True, approval="all")  # no mode opens a host
    assert answers.asked and "tinypkg-1.0-py3-none-any.whl" not in data["output"]
    assert f"{INDEX_HOST}:{index.port} was refused by the user" in data["network"]
    assert not any(e.allowed for e in events if isinstance(e, NetworkConnection))


def test_with_no_one_to_ask_an_unlisted_host_is_refused_unasked(tmp_path: Path, index: IndexServer) -> None:
    answers = Answers(Decision.ALL)
    _, data = _fetch(tmp_path, index, answers, interactive=False, yes=True)
    assert answers.asked == []
    assert "[sandbox.network] allow" in data["network"]


def test_always_opens_the_host_and_adds_it_to_the_user_config(tmp_path: Path, index: IndexServer,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    answers = Answers(Decision.ALWAYS)  # the REPL's w, ACP's "allow always"
    events, data = _fetch(tmp_path, index, answers, interactive=True)
    rule = f"{INDEX_HOST}:{index.port}"
    shown = f'[sandbox.network]\nallow = ["{rule}"]  # added to your user config\n'
    assert [a.always for a in answers.asked] == [shown]
    assert "tinypkg-1.0-py3-none-any.whl" in data["output"].splitlines()[-1], data["output"]
    seen = [e for e in events if isinstance(e, NetworkConnection)]
    assert seen[0].why.startswith(f'allowed by the user, always: "{rule}" added to [sandbox.network] allow in ')
    assert f'allow = ["{rule}"]' in (tmp_path / "home" / "config" / "config.toml").read_text()

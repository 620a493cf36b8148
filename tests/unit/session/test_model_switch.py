"""`/model`: a bad name is refused in one line and the model stays; a conversation with tool calls is dropped only
when the user says so (and the drop is in the trace); `/model` alone is an arrow-key picker."""

from __future__ import annotations

import json

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from cli_agent.config.settings import Settings
from cli_agent.contracts.messages import Message, ToolCall
from cli_agent.providers import make_provider
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import open_session
from cli_agent.ui.repl.repl import Repl


@pytest.fixture
def pipe():
    with create_pipe_input() as inp:
        yield inp


@pytest.fixture
def repl(tmp_path, monkeypatch, pipe):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    for key in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        monkeypatch.delenv(key, raising=False)
    ws = tmp_path / "ws"
    ws.mkdir()
    scripted = {"scripted:one": ScriptedProvider([{"text": "hi"}]),
                "scripted:json": ScriptedProvider([{"text": "hi"}], native_tools=False)}

    def factory(settings):
        return scripted.get(settings.model) or make_provider(settings.model, api_base=None, api_key=None)

    session = open_session(Settings(model="scripted:one", workspace=str(ws), trace=str(tmp_path / "t.jsonl")),
                           interactive=True, provider_factory=factory)
    r = Repl(session, Console(record=True, width=100, color_system=None), factory, prompt_input=pipe,
             prompt_output=DummyOutput())
    yield r
    r.session.close()


def out(repl) -> str:
    return " ".join(repl.console.export_text(clear=False).split())


@pytest.mark.parametrize(("name", "said"), [
    ("gpt-5-typo", "LiteLLM cannot tell which provider serves 'gpt-5-typo'"),
    ("openai/gpt-4o-minii", "LiteLLM does not know the model 'openai/gpt-4o-minii'; did you mean gpt-4o-mini"),
    ("openai/gpt-4o-mini", "no API key for openai/gpt-4o-mini: set OPENAI_API_KEY"),
])
@pytest.mark.slow
def test_a_model_that_cannot_work_is_refused_and_the_current_one_stays(repl, name, said):
    repl.session.agent.history.append(Message("user", "keep me"))
    repl.commands.dispatch(repl, f"/model {name}")
    assert f"model not changed: {said}" in out(repl)
    assert repl.session.settings.model == "scripted:one" and repl.session.agent.history == [Message("user",
                                                                                                    "keep me")]


def with_tool_calls(repl) -> None:
    call = ToolCall("c1", "read_file", {"path": "a"}, '{"path": "a"}')
    repl.session.agent.history[:] = [Message("user", "read a"), Message("assistant", "", tool_calls=(call,)),
                                      Message("tool", "{}", tool_call_id="c1"), Message("assistant", "done")]


def test_a_conversation_that_cannot_carry_over_is_dropped_only_when_the_user_says_so(repl, pipe, tmp_path):
    with_tool_calls(repl)
    pipe.send_text("n")  # one key
    repl.commands.dispatch(repl, "/model scripted:json")
    assert repl.session.settings.model == "scripted:one" and len(repl.session.agent.history) == 4
    assert "model not changed" in out(repl)
    pipe.send_text("y")
    repl.commands.dispatch(repl, "/model scripted:json")
    assert repl.session.settings.model == "scripted:json" and repl.session.agent.history == []
    assert "a new conversation (the protocol changed)" in out(repl)
    records = [json.loads(line) for line in (tmp_path / "t.jsonl").read_text().splitlines()]
    assert records[-1]["type"] == "conversation_reset" and records[-1]["kind"] == "clear"


def test_model_alone_is_a_picker_of_the_known_models(repl, pipe, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    pipe.send_text("\x1b[B\r")  # down, Enter: the second entry
    repl.commands.dispatch(repl, "/model")
    assert "model: scripted:one (native protocol)" in out(repl)
    assert repl.session.settings.model == "openai/gpt-4o-mini"  # offered for the key in the environment
    assert "model: openai/gpt-4o-mini" in out(repl)

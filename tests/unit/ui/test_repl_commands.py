"""The slash-command registry and the built-in commands, run against a real session with the scripted model."""

from __future__ import annotations

import json

import pytest
from rich.console import Console

from cli_agent.agent.approval import ApprovalMode
from cli_agent.config.settings import Settings
from cli_agent.contracts.messages import Message
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import open_session
from cli_agent.ui.repl.commands.builtin_commands import builtin_commands
from cli_agent.ui.repl.commands.commands import Command, CommandRegistry, Outcome
from cli_agent.ui.repl.repl import Repl

BUILTINS = {"help", "exit", "clear", "model", "approval", "tools", "prompt", "trace", "cost", "compact", "expand",
            "diff", "plan", "permissions"}


@pytest.fixture
def repl(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    ws = tmp_path / "ws"
    ws.mkdir()
    settings = Settings(model="scripted:one", workspace=str(ws), trace=str(tmp_path / "trace.jsonl"))
    providers = {"scripted:one": ScriptedProvider([{"text": "hi"}]),
                 "scripted:json": ScriptedProvider([{"text": "hi"}], native_tools=False)}

    def factory(s):
        if s.model not in providers:
            from cli_agent.contracts.errors import UsageError

            raise UsageError(f"no such model {s.model}")
        return providers[s.model]

    r = Repl(open_session(settings, interactive=True, provider_factory=factory),
             Console(record=True, width=120, color_system=None), factory)
    yield r
    r.session.close()


def run(repl, line: str) -> tuple[Outcome, str]:
    outcome = repl.commands.dispatch(repl, line)
    return outcome, repl.console.export_text()


def test_builtins_are_all_registered():
    assert set(builtin_commands().names()) == BUILTINS


def test_registry_refuses_duplicates_unless_replacing_and_resolves_aliases():
    registry = CommandRegistry()
    first = Command("undo", "undo the last change", lambda ctx, args: None, aliases=("u",))
    registry.register(first)
    with pytest.raises(ValueError, match="already a command"):
        registry.register(Command("undo", "again", lambda ctx, args: None))
    with pytest.raises(ValueError, match="bad command name"):
        registry.register(Command("two words", "x", lambda ctx, args: None))
    second = Command("undo", "better undo", lambda ctx, args: None)
    registry.register(second, replace=True)
    assert registry.get("/undo") is second and registry.get("u") is second


@pytest.mark.parametrize(("typed", "expected"), [("hel", "help"), ("aproval", "approval"), ("exti", "exit"),
                                                 ("mdoel", "model")])
def test_suggestions_for_unknown_names(typed, expected):
    assert expected in builtin_commands().suggest(typed)


def test_unknown_command_suggests_and_sends_nothing_to_the_model(repl):
    provider = repl.session.provider
    outcome, out = run(repl, "/clera")
    assert outcome is Outcome.CONTINUE
    assert "unknown command /clera, did you mean /clear?" in out
    assert provider.requests == []


def test_help_lists_every_command_and_shows_one(repl):
    _, out = run(repl, "/help")
    for name in BUILTINS:
        assert f"/{name}" in out
    assert "Ctrl-R" in out and "t yes to this tool" in " ".join(out.split())  # wherever the line breaks
    _, out = run(repl, "/help\napproval")  # a newline separates the name from its arguments too
    assert "/approval [default|plan|edits|all]" in out and "edits: creating and editing files is approved" in out


def test_a_registered_entry_shows_in_help_under_its_category(repl):
    repl.commands.register(Command("greet", "say hello", lambda ctx, args: None, "NAME",
                                   category="workflow: examples"))
    _, out = run(repl, "/help")
    assert "workflow: examples: /greet" in out  # by name; /help greet shows its usage


def test_exit_ends_and_clear_forgets_the_conversation(repl):
    assert run(repl, "/exit")[0] is Outcome.EXIT
    assert run(repl, "/quit")[0] is Outcome.EXIT
    old = repl.session
    old.agent.history.append(Message("user", "remember me"))
    _, out = run(repl, "/clear")
    assert repl.session is not old and repl.session.agent.history == [] and "started a new session" in out
    assert repl.session.provider is old.provider  # the same model goes on


def test_approval_switches_the_mode_and_resets_session_grants(repl):
    repl.session.agent.grant_tool("create_file")
    _, out = run(repl, "/approval edits")
    assert repl.session.agent.policy.mode is ApprovalMode.EDITS
    assert repl.session.agent.policy.granted_tools == frozenset()
    assert "approval: edits" in out
    _, out = run(repl, "/approval sometimes")
    assert "unknown approval mode" in out and repl.session.agent.policy.mode is ApprovalMode.EDITS


def test_model_switch_keeps_the_conversation_when_the_protocol_stays(repl):
    repl.session.agent.history.append(Message("user", "earlier"))
    repl.commands.dispatch(repl, "/model scripted:one")
    assert "the conversation carries over" in repl.console.export_text()
    assert repl.session.agent.history == [Message("user", "earlier")]


def test_model_local_resolves_its_protocol_and_options_like_a_fresh_session(tmp_path, monkeypatch):
    """`/model local` takes the protocol and options the local provider asks for, even when the provider at hand
    could call tools natively, as `--model local` does."""
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "ws").mkdir()
    settings = Settings(model="scripted:one", workspace=str(tmp_path / "ws"), trace=str(tmp_path / "t.jsonl"))
    factory = lambda s: ScriptedProvider([{"text": "hi"}])  # noqa: E731 - native tools either way
    repl = Repl(open_session(settings, interactive=True, provider_factory=factory),
                Console(record=True, width=120, color_system=None), factory)
    try:
        repl.commands.dispatch(repl, "/model local")
        assert repl.session.protocol == "json"
        plan = repl.session.agent.plan("hi")
        assert plan.options["temperature"] == 0.0 and "response_format" in plan.options
    finally:
        repl.session.close()


def test_model_switch_to_another_protocol_carries_a_plain_chat_over(repl):
    repl.session.agent.history.append(Message("user", "earlier"))
    old_trace = repl.session.trace_path
    _, out = run(repl, "/model scripted:json")
    assert repl.session.settings.model == "scripted:json" and repl.session.protocol == "json"
    assert "the conversation carries over" in out  # no tool call in it: nothing protocol-specific
    assert repl.session.agent.history == [Message("user", "earlier")] and repl.session.trace_path == old_trace
    assert repl.run_turn("now").answer == "hi" and repl.session.provider.requests  # the new model answers
    _, out = run(repl, "/model nowhere")
    assert "model not changed: no such model nowhere" in out and repl.session.settings.model == "scripted:json"
    _, out = run(repl, "/model")
    assert "model: scripted:json (json protocol)" in out


def test_tools_prompt_trace_and_cost(repl):
    _, out = run(repl, "/tools")
    assert "create_file" in out and "read_file" in out
    _, out = run(repl, "/prompt")
    assert "fingerprint" in out and "create_file" in out
    _, out = run(repl, "/trace")
    assert str(repl.session.trace_path) in out
    _, out = run(repl, "/cost")
    assert "0 prompt + 0 completion tokens" in out


def test_workflows_and_facts_are_listed(repl):
    _, out = run(repl, "/workflows")
    assert "explain" in out and "/NAME ARGS" in out
    _, out = run(repl, "/facts")
    assert "Committed facts" in out


def test_command_modules_register_commands_and_a_broken_one_is_a_note(repl):
    from cli_agent.ui.repl.commands.command_set import add_commands

    def good(registry, ctx):
        registry.register(Command("demo", "a demo command", lambda c, a: None))
        return ["good note"]

    def bad(registry, ctx):
        raise RuntimeError("boom")

    notes = add_commands(repl.commands, repl, [("demo", good), ("broken", bad)])
    assert repl.commands.get("demo") is not None
    assert notes == ["good note", "the broken commands could not be added: RuntimeError: boom"]
    assert {"undo", "resume", "facts", "workflows"} <= set(repl.commands.names())


def test_a_message_turn_goes_through_the_trace(repl, tmp_path):
    finished = repl.run_turn("hello")
    assert finished.answer == "hi" and repl.steps == 1
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert records[-1]["type"] == "run_finished" and "hi" in repl.console.export_text()

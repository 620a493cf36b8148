"""Onboarding: with no model configured the REPL says what is possible before any prompt, and offers a provider key
found in the environment."""

from __future__ import annotations

import re

import pytest
from termkit import PROMPT, Term

from cli_agent.config.settings import Settings
from cli_agent.contracts import errors
from cli_agent.ui.repl.start.onboarding import choose_model


def test_nothing_configured_and_no_local_runtime_says_every_way_and_exits_2():
    said: list[str] = []
    with pytest.raises(errors.UsageError, match="no model configured") as raised:
        choose_model(Settings(), env={}, say=said.append, runtime=lambda: None)
    assert raised.value.exit_code == 2
    text = "\n".join(said)
    for way in ("OPENAI_API_KEY", "--model openai/gpt-4o-mini", "--api-base http://127.0.0.1:8080/v1",
                "pip install 'cli-agent[local]'", "config.toml"):
        assert way in text
    assert len(said[0].splitlines()) <= 8


def test_a_configured_model_or_an_installed_local_runtime_needs_nothing():
    assert choose_model(Settings(model="openai/x"), env={}, ask=lambda q: pytest.fail("asked")) is None
    assert choose_model(Settings(api_base="http://127.0.0.1:1/v1"), env={}) is None
    assert choose_model(Settings(), env={}, runtime=lambda: "0.3.36") is None


def test_a_key_in_the_environment_is_offered_with_one_key_and_remembered():
    said: list[str] = []
    asked: list[str] = []
    saved: list[str] = []
    model = choose_model(Settings(), env={"ANTHROPIC_API_KEY": "k", "XAI_API_KEY": "k"}, say=said.append,
                         ask=lambda q: asked.append(q) or "\r", remember=lambda m: saved.append(m) or "saved")
    assert model == "anthropic/claude-sonnet-4-20250514" and saved == [model]
    assert "ANTHROPIC_API_KEY is set (and XAI_API_KEY)" in said[0]
    assert asked == ["Use anthropic/claude-sonnet-4-20250514? [Y/n] "]
    picks: list[list[str]] = []
    model = choose_model(Settings(), env={"ANTHROPIC_API_KEY": "k", "XAI_API_KEY": "k"}, say=said.append,
                         ask=lambda q: "n", choose=lambda title, options: picks.append(options) or 1,
                         remember=lambda m: saved.append(m) or "saved", runtime=lambda: None)
    assert model == "xai/grok-3" and saved[-1] == model  # n: a pick among the keys found, not an exit
    assert picks == [["anthropic/claude-sonnet-4-20250514  (ANTHROPIC_API_KEY is set)",
                      "xai/grok-3  (XAI_API_KEY is set)"]]
    with pytest.raises(errors.UsageError, match="no model chosen"):  # nothing picked (Esc): how to set one up
        choose_model(Settings(), env={"OPENAI_API_KEY": "k"}, say=said.append, ask=lambda q: "n",
                     choose=lambda title, options: None, remember=lambda m: pytest.fail("saved"))


def test_the_accepted_model_is_put_first_in_the_user_config(isolated_home):
    from cli_agent.config.loading import load_settings
    from cli_agent.fs import paths
    from cli_agent.ui.repl.start.onboarding import remember_model

    config = paths.user_config_file()
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('[sandbox]\nenv_allow = ["FOO"]\n')
    assert str(config) in remember_model("openai/gpt-4o-mini")
    assert config.read_text().startswith('model = "openai/gpt-4o-mini"')  # a top-level key, before any table
    assert load_settings({}, env={}).settings.model == "openai/gpt-4o-mini"


@pytest.mark.slow
@pytest.mark.parametrize("cols", [60, 80])
def test_in_a_terminal_the_key_is_offered_with_one_key_and_not_asked_again(tmp_path, cols):
    t = Term(tmp_path, None, cols=cols, env={"OPENAI_API_KEY": "sk-test"}, wait=r"\[Y/n\]")
    assert "No model is configured, but OPENAI_API_KEY is set." in t.child.before
    t.child.send("y")  # one key, no Enter
    t.expect("Using openai/gpt-4o-mini")
    t.expect(PROMPT)
    t.say("/model")
    t.expect(r"model: openai/gpt-4o-mini \(")
    t.child.send("\x1b")  # leave the picker
    t.expect(PROMPT)
    assert t.quit() == 0
    again = Term(tmp_path, None, cols=cols, env={"OPENAI_API_KEY": "sk-test"}, wait=PROMPT)  # not asked again
    assert "[Y/n]" not in again.child.before
    again.say("/model")
    again.expect(r"model: openai/gpt-4o-mini \(")
    again.child.send("\x1b")
    again.expect(PROMPT)
    assert again.quit() == 0


@pytest.mark.slow
def test_in_a_terminal_saying_no_offers_a_pick_and_leaving_it_lists_the_ways_and_exits_2(tmp_path):
    t = Term(tmp_path, None, cols=60, env={"OPENAI_API_KEY": "sk-test", "GEMINI_API_KEY": "g"}, wait=r"\[Y/n\]")
    t.child.send("n")
    t.expect("Which model then")
    t.expect("gemini")
    t.child.send("2")
    t.child.send("\r")
    t.expect("Using gemini/")
    t.expect(PROMPT)
    assert t.quit() == 0
    (tmp_path / "home" / "config" / "config.toml").unlink()
    t = Term(tmp_path, None, cols=60, env={"OPENAI_API_KEY": "sk-test"}, wait=r"\[Y/n\]")
    t.child.send("n")
    t.expect("Which model then")
    t.child.send("\x1b")
    rest = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\r", "", t.expect_raw(__import__("pexpect").EOF))
    assert "--api-base http://127.0.0.1:8080/v1" in " ".join(rest.split())
    assert "no model chosen" in rest.splitlines()[-1]
    t.child.close()
    assert t.child.exitstatus == 2


def test_esc_at_the_pick_does_not_ask_to_install_a_local_runtime_that_is_installed():
    said: list[str] = []
    with pytest.raises(errors.UsageError, match="no model chosen"):
        choose_model(Settings(), env={"OPENAI_API_KEY": "k"}, say=said.append, ask=lambda q: "n",
                     choose=lambda title, options: None, runtime=lambda: "0.3.36")
    text = "\n".join(said)
    assert "pip install" not in text and "the bundled offline model (installed): cli-agent --model local" in text

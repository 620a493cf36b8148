"""Every screen fits 60, 80 and 120 columns: `cli-agent tools` (one line per tool; NAME and --verbose in full),
`cli-agent workflows` (wrapped between words), the toolbar (cut by leaving parts out, never mid-word), rendered on
fixed-width recording consoles and in a pseudo-terminal."""

from __future__ import annotations

import dataclasses
import re
import sys

import pytest
from rich.console import Console

from cli_agent.agent.approval import ApprovalMode
from cli_agent.cli.main import run as cli_run
from cli_agent.config.settings import Settings
from cli_agent.contracts.messages import Message, Usage
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import open_session
from cli_agent.tools.registry import Registry
from cli_agent.ui.headless.listing import print_tools
from cli_agent.ui.repl.toolbar import next_mode, toolbar

pexpect = pytest.importorskip("pexpect")
WIDTHS = (60, 80, 120)
_CONTROL = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\r")


@pytest.mark.parametrize("width", WIDTHS)
def test_tools_is_one_line_per_tool_at_any_width(width):
    c = Console(record=True, width=width, color_system=None)
    print_tools(as_json=False, console=c)
    lines = c.export_text().splitlines()
    names = Registry.builtin().names()
    for name in names:
        (line,) = [line for line in lines if line.startswith(f"  {name} ")]
        assert len(line) <= width
    assert len(lines) <= len(names) + len(Registry.builtin().categories()) + 3
    assert any(re.match(r"  create_file +\* ", line) for line in lines)  # asks before it runs


@pytest.mark.parametrize("width", (60, 80))
def test_tools_name_and_verbose_show_the_parameters_wrapped_between_words(width):
    c = Console(record=True, width=width, color_system=None)
    print_tools(as_json=False, name="search", console=c)
    out = c.export_text()
    assert out.startswith("search  Explore")
    assert "pattern (string, required)" in out and "literal (boolean)" in out
    words = set(re.findall(r"[A-Za-z]+", " ".join(Registry.builtin().get("search").parameters["properties"]
                                                   ["pattern"]["description"].split())))
    assert all(len(line.rstrip()) <= width for line in out.splitlines())
    assert words <= set(re.findall(r"[A-Za-z]+", out))  # no word cut in two by the wrap
    c = Console(record=True, width=width, color_system=None)
    print_tools(as_json=False, verbose=True, console=c)
    everything = c.export_text()
    assert all(f"{name}  " in everything for name in Registry.builtin().names())


def test_tools_with_an_unknown_name_is_one_line_and_exit_2(capsys):
    assert cli_run(["tools", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "unknown tool 'nope'" in err[0] and "read_file" in err[0]


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "a-rather-long-workspace-folder-name").mkdir()
    settings = Settings(model="openai/gpt-4o-mini-2024-07-18", workspace=str(tmp_path / "a-rather-long-workspace-"
                                                                                           "folder-name"),
                        trace=str(tmp_path / "t.jsonl"))
    opened = open_session(settings, interactive=True,
                          provider_factory=lambda s: ScriptedProvider([], context_window=1000), record=False)
    yield opened
    opened.close()


def bar(session, width: int, steps: int = 3) -> str:
    (part,) = toolbar(session.settings, session, steps, width=width)
    return part[1]


@pytest.mark.parametrize("width", WIDTHS)
def test_the_toolbar_fits_and_keeps_the_model_approval_and_tokens(session, width):
    session.agent.usage = Usage(12_000, 345, 0.0123)
    session.set_mode(ApprovalMode.ASK, keep_grants=False)
    session.agent.grant_tool("create_file")
    text = bar(session, width)
    assert len(text) <= width
    assert "gpt-4o-mini-2024-07-18" in text and "ask +create_file" in text
    assert "12,345 tokens" in text or "12.3k tok" in text
    if width == 120:
        assert "$0.0123" in text and "steps 3" in text and "approval: ask +create_file (⇧Tab)" in text


def test_the_toolbar_shows_the_prompt_tokens_served_from_cache_when_it_has_room(session):
    session.agent.usage = Usage(12_000, 345, 0.0, cached_tokens=11_000)
    assert "12,345 tokens (11,000 cached)" in bar(session, 160)
    narrow = bar(session, 60)
    assert len(narrow) <= 60 and "12.3k tok (11.0k cached)" in narrow
    narrower = bar(session, 40)
    assert len(narrower) <= 40 and "cached" not in narrower and "tok" in narrower
    session.agent.usage = Usage(12_000, 345)
    assert "cached" not in bar(session, 160)


@pytest.mark.parametrize("model", ["anthropic/claude-sonnet-4-20250514", "openai/gpt-4o-mini-2024-07-18"])
def test_at_80_columns_a_long_model_name_leaves_room_for_the_cached_tokens(session, model):
    session.settings = dataclasses.replace(session.settings, model=model)
    session.agent.usage = Usage(12_000, 345, 0.0123, cached_tokens=11_000)
    text = bar(session, 80)
    assert len(text) <= 80 and "cached)" in text and model.rsplit("/", 1)[-1] in text, text


def test_while_the_session_starts_with_no_model_set_the_toolbar_does_not_say_no_model():
    assert toolbar(Settings(), None, 0) == [("class:bottom-toolbar", " starting… ")]
    assert toolbar(Settings(model="local"), None, 0) == [("class:bottom-toolbar", " local · starting… ")]


def test_the_context_meter_shows_from_70_percent(session):
    assert "context" not in bar(session, 120)  # the window is unknown before the first request
    session.agent._talk.window._window = 1000  # what the loop learns at the first request
    session.agent.history[:] = [Message("user", "x" * 2000)]  # ~500 tokens
    assert "context" not in bar(session, 120)
    session.agent.history[:] = [Message("user", "x" * 3000)]  # ~750 tokens
    assert "context 75%" in bar(session, 60)


def test_shift_tab_moves_through_the_modes():
    assert [next_mode(m) for m in ApprovalMode] == [ApprovalMode.PLAN, ApprovalMode.ALL, ApprovalMode.ASK,
                                                     ApprovalMode.EDITS]  # ask → plan → edits → all → ask


def spawn(args: list[str], cols: int, tmp_path) -> str:
    env = {"CLI_AGENT_HOME": str(tmp_path / "home"), "TERM": "xterm", "PATH": "/usr/bin:/bin"}
    child = pexpect.spawn(sys.executable, ["-m", "cli_agent", *args], env=env | {"PYTHONPATH": ":".join(sys.path)},
                          dimensions=(40, cols), encoding="utf-8", timeout=60)
    child.expect(pexpect.EOF)
    child.close()
    assert child.exitstatus == 0
    return _CONTROL.sub("", child.before)


@pytest.mark.slow
@pytest.mark.parametrize("cols", (60, 80))
def test_in_a_terminal_tools_and_workflows_fit_the_width(tmp_path, cols):
    from cli_agent.tools.registry import Registry

    lines = spawn(["tools"], cols, tmp_path).splitlines()
    registry = Registry.builtin()
    most = len(registry) + len(registry.categories()) + 3  # a line a tool, a heading a category, the notes
    assert 10 <= len(lines) <= most and all(len(line) <= cols for line in lines)
    out = spawn(["workflows", "-C", str(tmp_path)], cols, tmp_path)
    assert all(len(line) <= cols for line in out.splitlines())
    assert "Explain what a file or folder is for" in " ".join(out.split())  # wrapped between words

"""The REPL's input side without a terminal: the prompt's keys (prompt_toolkit pipe input), completion, `@path`
attachments, the approval question, the LiteLLM warm-up, and the loop itself."""

from __future__ import annotations

import sys
import threading
import time

import pytest
from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from cli_agent.config.settings import Settings
from cli_agent.contracts.change import Change
from cli_agent.contracts.events import ApprovalAsked, Decision, Warning
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.litellm_provider import LiteLLMProvider
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import open_session
from cli_agent.ui.repl.completion import (
    ATTACH_MAX,
    PathIndex,
    ReplCompleter,
    attach_files,
    attachment_refs,
    bindings,
    match_paths,
)
from cli_agent.ui.repl.repl import Repl
from cli_agent.ui.repl.start.startup import Startup, warm_up
from cli_agent.ui.repl.toolbar import toolbar
from cli_agent.ui.view.approve import TerminalApprover, choices, parse_answer, prompt_for, read_key


@pytest.fixture
def pipe():
    with create_pipe_input() as inp:
        yield inp


@pytest.fixture
def ws(tmp_path):
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "my notes.md").write_text("# notes\n")
    (root / "README.md").write_text("readme\n")
    return root


def make_repl(tmp_path, monkeypatch, ws, replies, pipe, answers=("y",)):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    provider = ScriptedProvider(replies)
    settings = Settings(model="scripted:x", workspace=str(ws), trace=str(tmp_path / "trace.jsonl"))
    console = Console(record=True, width=120, color_system=None)
    answer = iter(answers)
    approver = TerminalApprover(console, read=lambda question: next(answer))
    session = open_session(settings, interactive=True, provider_factory=lambda s: provider)
    return Repl(session, console, lambda s: provider, approver=approver, prompt_input=pipe,
                prompt_output=DummyOutput()), provider


# -- keys ------------------------------------------------------------------------------------------------------

def prompt_with_bindings(pipe) -> PromptSession:
    return PromptSession("> ", multiline=True, key_bindings=bindings(), input=pipe, output=DummyOutput())


def test_enter_sends_and_ctrl_j_or_meta_enter_insert_a_newline(pipe):
    session = prompt_with_bindings(pipe)
    pipe.send_text("one\ntwo\x1b\rthree\r")
    assert session.prompt() == "one\ntwo\nthree"


def test_a_bracketed_paste_keeps_its_newlines(pipe):
    session = prompt_with_bindings(pipe)
    pipe.send_text("\x1b[200~first line\r\nsecond line\x1b[201~\r")
    assert session.prompt() == "first line\nsecond line"


def test_text_typed_faster_than_it_is_handled_arrives_whole_and_is_completed_once_not_per_character(pipe):
    asked: list[str] = []

    class Counting(Completer):
        def get_completions(self, document, complete_event):
            asked.append(document.text)
            return iter(())

    session = PromptSession("> ", multiline=True, key_bindings=bindings(), completer=Counting(),
                            complete_while_typing=True, input=pipe, output=DummyOutput())
    text = ("naïve → café, 100% [ok]; " * 80)[:2000]  # no bracketed paste: 2,000 separate key presses
    pipe.send_text(text + "\r")
    assert session.prompt() == text
    assert len(asked) < 10  # once per run of characters taken together, not 2,000 times


def test_keys_between_typed_characters_still_act_in_order(pipe):
    session = prompt_with_bindings(pipe)
    pipe.send_text("abc\x1b[DX\x1b[Cd\x1b\re\r")  # left arrow, X, right arrow, d, Meta+Enter, e
    assert session.prompt() == "abXcd\ne"


def test_ctrl_c_drops_a_typed_line_but_interrupts_an_empty_prompt(pipe):
    session = prompt_with_bindings(pipe)
    pipe.send_text("half typed\x03kept\r")
    assert session.prompt() == "kept"
    pipe.send_text("\x03")
    with pytest.raises(KeyboardInterrupt):
        session.prompt()


def test_ctrl_r_searches_the_history(pipe):
    session = prompt_with_bindings(pipe)
    for line in ("fix the parser", "add tests", "\x12pars\r\r"):
        pipe.send_text(line if line.startswith("\x12") else line + "\r")
        last = session.prompt()
    assert last == "fix the parser"


def test_read_key_takes_one_key_and_ctrl_c_is_empty(pipe):
    pipe.send_text("a")
    assert read_key("?", input=pipe, output=DummyOutput()) == "a"
    pipe.send_text("\x03")
    assert read_key("?", input=pipe, output=DummyOutput()) == ""


# -- the approval question -------------------------------------------------------------------------------------

@pytest.mark.parametrize(("typed", "decision"), [("y", Decision.YES), ("Y", Decision.YES), ("n", Decision.NO),
                                                 ("a", Decision.ALL), ("t", Decision.TOOL), ("q", Decision.NO),
                                                 ("f", Decision.FEEDBACK),
                                                 ("", Decision.NO), ("\r", Decision.NO), ("x", Decision.NO),
                                                 ("\x1b[A", Decision.NO)])
def test_answers(typed, decision):
    assert parse_answer(typed) is decision


def asked(index=1, total=1, *, change: bool = True) -> ApprovalAsked:
    made = Change("create_file", "create", "a.txt", None, b"x") if change else None
    return ApprovalAsked(ToolCall("c1", "create_file", {"path": "a.txt", "content": "x"}, ""), made, index, total)


def test_the_question_says_what_all_and_tool_grant():
    several = choices(asked(1, 3)).plain
    assert "a yes to these 3 and every later change this session" in several
    assert "t yes to every create_file call this session" in several
    assert "a yes to this and every later change this session" in choices(asked()).plain
    one_shot = choices(asked(), session_scoped=False).plain  # no later turn to grant for
    assert "y yes · n no, stop the turn · f no, and tell the model what to do instead" in one_shot
    assert " a " not in one_shot and " t " not in one_shot
    assert "a yes to this and every later call and change this session" in choices(asked(change=False)).plain


def test_a_change_is_applied_and_a_call_that_changes_no_file_is_run():
    assert prompt_for(asked()) == "Apply? "
    assert prompt_for(asked(change=False)) == "Run it? "  # an MCP tool, a command asked for before it runs
    assert prompt_for(asked(), own=True) == "Apply your command's changes? "


@pytest.mark.parametrize("error", [KeyboardInterrupt, EOFError])
def test_ctrl_c_or_ctrl_d_at_the_question_is_no(error):
    def read(question):
        raise error

    console = Console(record=True, width=120, color_system=None)
    assert TerminalApprover(console, read=read)(asked()) is Decision.NO
    assert "create_file a.txt" in console.export_text()  # the panel was shown before asking


# -- completion ------------------------------------------------------------------------------------------------

def completions(completer, text: str) -> list[str]:
    return [c.text for c in completer.get_completions(Document(text), CompleteEvent(completion_requested=True))]


def test_completer_offers_commands_their_arguments_and_workspace_paths(tmp_path, monkeypatch, ws, pipe):
    repl, _ = make_repl(tmp_path, monkeypatch, ws, [], pipe)
    completer = ReplCompleter(repl)
    assert completions(completer, "/he") == ["/help"]
    assert "/approval" in completions(completer, "/")
    assert completions(completer, "/approval e") == ["edits"]
    assert "model" in completions(completer, "/help m")
    assert completions(completer, "explain @src/a") == ["src/app.py"]
    assert completions(completer, "explain @app") == ["src/app.py"]  # by file name too
    assert '"my notes.md"' in completions(completer, "@my")  # a name with a space is quoted
    assert completions(completer, "mail me@src") == []  # an address is not a reference
    assert completions(completer, "//he") == []
    repl.session.close()


def test_path_index_walks_again_only_after_its_ttl(ws):
    now = [0.0]
    index = PathIndex(lambda: Workspace(ws), ttl=3.0, clock=lambda: now[0])
    assert "README.md" in index.paths()
    (ws / "new.txt").write_text("")
    assert "new.txt" not in index.paths()
    now[0] = 5.0
    assert "new.txt" in index.paths()


def test_match_paths_orders_prefix_then_name_then_substring():
    paths = ["app/", "app/main.py", "lib/app.py", "lib/myapp.txt", "zz.py"]
    assert match_paths(paths, "app") == ["app/", "app/main.py", "lib/app.py", "lib/myapp.txt"]
    assert match_paths(paths, "") == ["app/", "zz.py"]


# -- @path attachments -----------------------------------------------------------------------------------------

def test_attachment_refs():
    assert attachment_refs('see @a.py, @"my notes.md" and x@y.com?') == [("@a.py,", "a.py"),
                                                                         ('@"my notes.md"', "my notes.md")]


def test_attach_files_reads_through_the_sandbox_and_says_what_it_did(ws, tmp_path):
    (tmp_path / "outside.txt").write_text("secret")
    (ws / "bin.dat").write_bytes(b"\0\1\2")
    (ws / "big.txt").write_text("x" * (ATTACH_MAX + 10))
    message, notes = attach_files("look at @src/app.py and @\"my notes.md\" @../outside.txt @bin.dat @nope @big.txt "
                                  "@src", Workspace(ws))
    assert "File `src/app.py`:\n```\nprint('app')\n```" in message
    assert "# notes" in message and "secret" not in message
    assert f"File `big.txt` (the first {ATTACH_MAX:,} bytes):" in message
    assert "Folder `src` holds:\nsrc/app.py" in message
    assert notes[0] == "attached src/app.py (1 lines)"
    assert any(n.startswith("@../outside.txt not attached") for n in notes)
    assert "@bin.dat not attached: a binary file" in notes
    assert any(n.startswith("@nope not attached: nope does not exist") for n in notes)
    assert message.startswith("look at @src/app.py")


def test_a_fence_in_the_file_does_not_end_the_attachment(ws):
    (ws / "doc.md").write_text("```\ncode\n```\n")
    message, _ = attach_files("@doc.md", Workspace(ws))
    assert "````\n```\ncode\n```\n````" in message


# -- start-up and the loop -------------------------------------------------------------------------------------

def test_warm_up_only_for_litellm():
    assert warm_up(ScriptedProvider([])) is None
    loaded = threading.Event()
    thread = warm_up(LiteLLMProvider("openai/gpt-4o-mini"), load=loaded.set)
    assert thread is not None
    thread.join(5)
    assert loaded.is_set()


def loader(settings: Settings, calls: list[str] | None = None):
    def load():
        from cli_agent.config.loading import Loaded

        if calls is not None:
            calls.append("load")
        return Loaded(settings, {}, [])

    return load


def test_the_start_up_loads_and_opens_nothing_until_started_then_all_of_it_in_its_thread(tmp_path, monkeypatch):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    calls: list[str] = []
    settings = Settings(model="scripted:x", workspace=str(tmp_path), trace=str(tmp_path / "t.jsonl"))
    startup = Startup(loader(settings, calls), lambda s: ScriptedProvider([]), foreground=lambda s: False)
    assert calls == [] and startup.settings is None and startup.session is None and not startup.ready
    threads, ready = [], threading.Event()
    startup.start(lambda: threads.append(threading.current_thread()), on_ready=ready.set)
    session = startup.get()
    assert calls == ["load"] and startup.ready and ready.wait(5)
    assert threads and threads[0] is not threading.main_thread()  # `then` ran in the start-up's thread
    assert startup.settings is session.settings and session.settings.model == "scripted:x"
    startup.close()
    written = (tmp_path / "t.jsonl").read_text()
    assert '"type": "trace_header"' in written
    session.trace(Warning(code="late", message="after the close"))
    assert (tmp_path / "t.jsonl").read_text() == written  # closed with the start-up: nothing more is written


def test_a_session_whose_set_up_draws_on_the_terminal_is_opened_by_get_in_the_callers_thread(tmp_path, monkeypatch):
    """The local model's first use draws a progress bar: not over the prompt, but when the first line is sent."""
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    settings = Settings(model="scripted:x", workspace=str(tmp_path), trace=str(tmp_path / "t.jsonl"))
    opened_in: list[threading.Thread] = []

    def factory(s):
        opened_in.append(threading.current_thread())
        return ScriptedProvider([])

    startup = Startup(loader(settings), factory, foreground=lambda s: s.model == "scripted:x")
    extended = threading.Event()
    startup.start(extended.set)
    assert extended.wait(5) and wait_until(lambda: startup.ready)
    assert startup.ready and extended.is_set() and startup.settings is not None and startup.session is None
    assert opened_in == []  # nothing drawn behind the prompt
    session = startup.get()
    assert opened_in == [threading.current_thread()] and session is startup.session
    startup.close()


@pytest.mark.parametrize("broken", ["config", "model", "workspace"])
def test_a_start_up_that_fails_hands_its_error_to_on_error_and_to_get(tmp_path, monkeypatch, broken):
    from cli_agent.contracts.errors import ConfigError, UsageError

    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    settings = Settings(model="scripted:x", workspace=str(tmp_path / "gone" if broken == "workspace" else tmp_path))

    def load():
        raise ConfigError("x.toml:1: max_steps: expected an integer")

    def factory(s):
        raise UsageError("no model configured")

    startup = Startup(load if broken == "config" else loader(settings),
                      factory if broken == "model" else (lambda s: ScriptedProvider([])), foreground=lambda s: False)
    seen: list[BaseException] = []
    startup.start(on_error=seen.append)
    expected = {"config": "max_steps: expected an integer", "model": "no model configured",
                "workspace": "workspace is not a folder"}[broken]
    with pytest.raises((ConfigError, UsageError), match=expected):
        startup.get()
    assert len(seen) == 1 and seen[0] is startup.error and startup.session is None
    startup.close()  # nothing to close; the error stays for the REPL to raise


def test_the_repl_draws_its_prompt_before_the_start_up_and_says_what_it_made_at_the_first_line(tmp_path, monkeypatch,
                                                                                                ws, pipe):
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    settings = Settings(model="scripted:x", workspace=str(ws), trace=str(tmp_path / "trace.jsonl"))
    console = Console(record=True, width=120, color_system=None)
    repl = Repl(Startup(loader(settings), lambda s: ScriptedProvider([{"text": "hello there"}])), console,
                lambda s: ScriptedProvider([]), prompt_input=pipe, prompt_output=DummyOutput())
    assert "starting…" in "".join(text for _, text in repl.line.toolbar())
    assert repl.commands.get("explain") is None  # the workflows come with the start-up
    pipe.send_text("hi\r\x04")
    assert repl.loop() == 0
    out = console.export_text()
    assert "scripted:x · " in out and out.index("scripted:x · ") < out.index("hello there")
    assert repl.commands.get("explain") is not None
    assert "scripted:x" in "".join(text for _, text in repl.line.toolbar())
    repl.startup.close()


def test_a_start_up_failure_ends_the_prompt_with_its_error(tmp_path, monkeypatch, pipe):
    from cli_agent.contracts.errors import ConfigError

    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))

    def load():
        raise ConfigError("x.toml:1: invalid TOML")

    repl = Repl(Startup(load, lambda s: ScriptedProvider([])), Console(record=True), lambda s: ScriptedProvider([]),
                prompt_input=pipe, prompt_output=DummyOutput())
    with pytest.raises(ConfigError, match="invalid TOML"):
        repl.loop()  # nothing typed: the failure itself ends the prompt


def test_loop_runs_a_turn_with_an_approval_records_history_and_exits_0_on_ctrl_d(tmp_path, monkeypatch, ws, pipe):
    replies = [{"tool_calls": [{"name": "create_file", "arguments": {"path": "new.txt", "content": "hi\n"}}]},
               {"text": "made it"}]
    repl, provider = make_repl(tmp_path, monkeypatch, ws, replies, pipe)
    pipe.send_text("/nope\r")
    pipe.send_text("make a file\r")
    pipe.send_text("\x04")
    assert repl.loop() == 0
    out = repl.console.export_text()
    assert "unknown command /nope" in out
    assert (ws / "new.txt").read_text() == "hi\n" and "made it" in out
    assert len(provider.requests) == 2
    assert "make a file" in (tmp_path / "home" / "state" / "history").read_text()
    bar = "".join(text for _, text in toolbar(repl.session.settings, repl.session, repl.steps))
    assert "scripted:x" in bar and "approval: ask" in bar and "steps 2" in bar
    repl.session.close()


def test_a_failing_or_interrupted_command_returns_to_the_prompt(tmp_path, monkeypatch, ws, pipe):
    from cli_agent.contracts.errors import UsageError
    from cli_agent.ui.repl.commands.commands import Command

    repl, _ = make_repl(tmp_path, monkeypatch, ws, [], pipe)

    def interrupted(ctx, args):
        raise KeyboardInterrupt

    def failing(ctx, args):
        raise UsageError("that did not work")

    repl.commands.register(Command("slow", "x", interrupted))
    repl.commands.register(Command("bad", "x", failing))
    pipe.send_text("/slow\r/bad\r/exit\r")
    assert repl.loop() == 0
    out = repl.console.export_text()
    assert "cancelled (Ctrl-C)" in out and "that did not work" in out
    repl.session.close()


def test_the_repl_needs_a_terminal(capsys, tmp_path, monkeypatch):
    from cli_agent.cli.main import run

    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    monkeypatch.setattr(sys, "stdin", open(__file__))  # noqa: SIM115 - a file is never a terminal
    try:
        code = run(["--model", "scripted:x", "-C", str(tmp_path)])
    finally:
        sys.stdin.close()
    assert code == 2
    assert "no terminal for the REPL: pass -p TEXT, or -p - to read the task from stdin" in capsys.readouterr().err


def wait_until(condition, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True

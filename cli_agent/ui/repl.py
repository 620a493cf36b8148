"""The interactive REPL: `cli-agent` with no arguments.

A prompt_toolkit prompt (history in the user state dir, Ctrl-R search, Meta+Enter / Ctrl-J for a new line, tab
completion, a bottom toolbar) reads a message or a slash command (`cli_agent.ui.commands`); a message runs one
turn of the session's agent, drawn by `Renderer` and asked about by `TerminalApprover`. Ctrl-C during a turn
cancels it (the loop finishes the run cleanly) and returns to the prompt; Ctrl-C at an empty prompt only says how
to quit; Ctrl-D quits. SIGTERM closes the session (so the trace is complete) and leaves with 143 through `cli.py`.

LiteLLM is never imported before the prompt is drawn. Opening the session asks a LiteLLM model whether it calls
tools natively, which imports LiteLLM (seconds): for such a model `SessionOpener` opens the session in a background
thread once the first prompt is on screen (that is the warm-up); otherwise `warm_up` loads what the first turn
needs behind the prompt.
"""

from __future__ import annotations

import contextlib
import sys
import threading
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent import errors
from cli_agent.events import Event, RunFinished, StopReason

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.config import Settings
    from cli_agent.session import ProviderFactory, Session
    from cli_agent.sessions import SessionEntry
    from cli_agent.trace import Trace

__all__ = ["Repl", "SessionOpener", "run_repl", "warm_up"]

NO_TERMINAL = "no terminal for the REPL: pass -p TEXT, or -p - to read the task from stdin"


def run_repl(loaded: Any, *, provider_factory: ProviderFactory, resume: str | None = None) -> int:
    """`resume`: continue that session (sessions.LATEST for -c, or an id) instead of starting a new one; a missing or
    damaged one is a one-line error (exit 2) before the prompt."""
    if not sys.stdin.isatty():
        raise errors.UsageError(NO_TERMINAL)
    from rich.console import Console

    resumed = None
    if resume is not None:
        from cli_agent.sessions import load_resumable

        resumed = load_resumable(loaded.settings.workspace, resume)
    opener = SessionOpener(loaded.settings, provider_factory, resume=resumed)
    try:
        return Repl(opener, Console(highlight=False), provider_factory).loop()
    finally:
        if opener.session is not None:
            opener.session.close()


class SessionOpener:
    """The session, opened at once, or (for a LiteLLM model whose protocol must be looked up) in a background
    thread started by `start()` after the prompt is drawn. The provider is made at once either way, so a bad model
    or script fails before the prompt appears. `resume`: (entry, trace) of a session to continue, given to the new
    session before its first run."""

    def __init__(self, settings: Any, provider_factory: ProviderFactory | None = None, *,
                 session: Session | None = None, resume: tuple[SessionEntry, Trace] | None = None) -> None:
        self.settings = session.settings if session is not None else settings
        self.session = session
        self.resume = resume
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        if session is None:
            assert provider_factory is not None
            self._provider = provider_factory(settings)
            if not self.deferred():
                self.session = self._open()

    def deferred(self) -> bool:
        from cli_agent.providers.litellm_provider import LiteLLMProvider

        s = self.settings
        return s.protocol == "auto" and not s.no_tools and isinstance(self._provider, LiteLLMProvider)

    def _open(self) -> Session:
        from cli_agent.session import open_session

        session = open_session(self.settings, interactive=True, provider_factory=lambda settings: self._provider)
        if self.resume is not None:
            from cli_agent.sessions import resume_into

            try:
                resume_into(session, *self.resume)
            except BaseException:
                session.close()
                raise
        return session

    @property
    def ready(self) -> bool:
        return self.session is not None or self.error is not None

    def start(self, on_error: Callable[[BaseException], None] = lambda exc: None) -> None:
        if self.ready or self._thread is not None:
            return

        def opening() -> None:
            try:
                self.session = self._open()
            except BaseException as exc:  # handed to the main thread, which raises it
                self.error = exc
                on_error(exc)

        self._thread = threading.Thread(target=opening, name="open-session", daemon=True)
        self._thread.start()

    def get(self) -> Session:
        if not self.ready:
            self.start()
            assert self._thread is not None
            self._thread.join()
        if self.error is not None:
            raise self.error
        assert self.session is not None
        return self.session


def warm_up(provider: Any, preload: Callable[[], Any] | None = None) -> threading.Thread | None:
    """Import in a background thread what the first turn needs: LiteLLM when the provider uses it, else the
    provider's own `preload` (the HTTP transport's httpx), then the renderer's Rich modules; None when the provider
    needs nothing loaded (the scripted one)."""
    try:
        from cli_agent.providers import litellm_provider
    except ImportError:
        return None
    if isinstance(provider, litellm_provider.LiteLLMProvider):
        load = preload or getattr(litellm_provider, "preload", None)
    else:
        load = preload or getattr(provider, "preload", None)
    if load is None:
        return None

    def quietly() -> None:
        with contextlib.suppress(Exception):  # the first request will report a broken install properly
            load()
            import importlib

            for module in ("rich.live", "rich.spinner", "rich.markdown"):  # the first turn's spinner and answer
                importlib.import_module(module)

    thread = threading.Thread(target=quietly, name="preload", daemon=True)
    thread.start()
    return thread


class Repl:
    """The REPL and the `CommandContext` its commands use."""

    def __init__(self, session: Session | SessionOpener, console: Console, provider_factory: ProviderFactory, *,
                 approver: Any = None, prompt_input: Any = None, prompt_output: Any = None) -> None:
        from cli_agent.ui.approve import TerminalApprover
        from cli_agent.ui.commands import builtin_commands, load_extensions

        self.opener = session if isinstance(session, SessionOpener) else SessionOpener(None, session=session)
        self._announced = self.opener.session is not None
        self.console = console
        self.provider_factory = provider_factory
        self.approver = approver or TerminalApprover(console)
        self.steps = 0
        self.commands = builtin_commands()
        self.notes = load_extensions(self.commands, self)
        self._io = {"input": prompt_input, "output": prompt_output}
        self._prompt: Any = None

    @property
    def session(self) -> Session:
        """The session; the first use waits for it if it is still being opened behind the prompt."""
        if not self.opener.ready:
            self.console.print("(looking up the model…)", style="dim", markup=False)
        session = self.opener.get()
        if not self._announced:
            self._announced = True
            self._notes(session.notes)
        return session

    @property
    def settings(self) -> Settings:
        return self.opener.settings  # type: ignore[no-any-return]

    def _notes(self, notes: Iterable[str]) -> None:
        from rich.text import Text

        from cli_agent.ui.headless import escape_for_terminal as esc

        for note in notes:
            self.console.print(Text(esc(note), style="dim"))

    # -- the loop ----------------------------------------------------------------------------------------------

    def loop(self) -> int:
        self._banner()
        while True:
            try:
                text = self.read()
            except KeyboardInterrupt:
                self.console.print("Ctrl-D or /exit to quit", style="dim", markup=False)
                continue
            except EOFError:
                return 0
            if text.strip() and self._handle(text):
                return 0

    def _handle(self, text: str) -> bool:
        """Run one line (a command or a message); True when the REPL should end. A Ctrl-C or a command's error
        returns to the prompt; a session that could not be opened ends the REPL with its error."""
        from rich.text import Text

        from cli_agent.ui.commands import Outcome
        from cli_agent.ui.headless import escape_for_terminal as esc

        line = text.lstrip()
        try:
            if line.startswith("/") and not line.startswith("//"):
                return self.commands.dispatch(self, text.strip()) is Outcome.EXIT
            self.turn(line[1:] if line.startswith("//") else text)
        except KeyboardInterrupt:
            self.console.print("cancelled (Ctrl-C)", style="yellow", markup=False)
        except errors.CliAgentError as exc:
            if self.opener.error is not None:
                raise
            self.console.print(Text(esc(str(exc)), style="red"))
        return False

    def read(self) -> str:
        if self._prompt is None:
            self._prompt = self._make_prompt()
        return str(self._prompt.prompt())

    def _make_prompt(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.styles import Style

        from cli_agent.ui.completion import ReplCompleter, bindings, history

        prompt: Any = PromptSession(
            [("class:prompt", "> ")], history=history(self.console), multiline=True, key_bindings=bindings(),
            completer=ReplCompleter(self), complete_while_typing=True, prompt_continuation=". ",
            bottom_toolbar=self._toolbar, enable_suspend=True,
            style=Style.from_dict({"prompt": "bold ansicyan"}), **{k: v for k, v in self._io.items() if v})
        warmed: list[bool] = []

        def after_first_render(_: Any) -> None:
            if warmed:
                return
            warmed.append(True)
            if self.opener.session is not None:
                warm_up(self.opener.session.provider)
            else:  # opening the session imports LiteLLM: the warm-up; a failure ends the prompt with its error
                self.opener.start(lambda exc: prompt.app.loop.call_soon_threadsafe(
                    lambda: prompt.app.exit(exception=exc) if prompt.app.is_running else None))

        prompt.app.after_render += after_first_render
        return prompt

    def _toolbar(self) -> Any:
        from cli_agent.ui.completion import toolbar

        return toolbar(self.opener.settings, self.opener.session, self.steps)

    def _banner(self) -> None:
        from rich.text import Text

        from cli_agent import __version__
        from cli_agent.ui.completion import short_path
        from cli_agent.ui.headless import escape_for_terminal as esc

        settings, session = self.opener.settings, self.opener.session
        root = str(session.workspace.root) if session is not None else str(Path(settings.workspace).resolve())
        line = Text.assemble((f"cli-agent {__version__}", "bold"), " · ", (esc(settings.model or "no model"),
                             "cyan"), " · ", esc(short_path(root)), (" · /help for help", "dim"))
        if self.opener.resume is not None:
            entry = self.opener.resume[0]
            line.append(f" · resumed session {esc(entry.id)}: {esc(_clip(entry.first_message))}", style="green")
        self.console.print(line)
        self._notes([*(session.notes if session is not None else ()), *self.notes])

    def turn(self, text: str) -> RunFinished:
        from rich.text import Text

        from cli_agent.ui.completion import attach_files
        from cli_agent.ui.headless import escape_for_terminal as esc

        message, notes = attach_files(text, self.session.workspace)
        for note in notes:
            self.console.print(Text("  " + esc(note), style="dim"))
        return self.run_turn(message)

    # -- the CommandContext ------------------------------------------------------------------------------------

    def drive(self, events: Iterator[Event]) -> RunFinished:
        from cli_agent.session import drive
        from cli_agent.ui.render import Renderer

        renderer = Renderer(self.console)
        try:
            finished = drive(events, self.session.trace, self._count, renderer)
        except KeyboardInterrupt:  # landed after the run had finished: the run is complete already
            finished = RunFinished(stop_reason=StopReason.CANCELLED, message="cancelled (Ctrl-C)")
        finally:
            renderer.close()
        if finished.stop_reason is StopReason.TERMINATED:
            raise errors.TerminateSignal()
        return finished

    def _count(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.steps += event.steps

    def run_turn(self, prompt: str, *, only_tools: Collection[str] | None = None) -> RunFinished:
        return self.drive(self.session.run(prompt, self.approver, only_tools=only_tools))

    def ask(self, question: str, *, choices: Iterable[str] = (), default: str = "") -> str:
        from prompt_toolkit import prompt
        from prompt_toolkit.completion import WordCompleter

        from cli_agent.ui.headless import escape_for_terminal as esc

        words = list(choices)
        return prompt(esc(question), completer=WordCompleter(words) if words else None, default=default,
                      **{k: v for k, v in self._io.items() if v})

    def replace_session(self, session: Session) -> None:
        """The REPL goes on with `session`; the old one is closed (its provider stays open if `session` uses it)."""
        old, self.opener.session = self.opener.session, session
        if old is None or old is session:
            return
        if old.provider is session.provider:
            old.trace.close()
        else:
            old.close()

    def switch_model(self, name: str) -> None:
        """Swap the provider in place: the session, its trace and (when the protocol stays) the conversation
        carry on."""
        from rich.text import Text

        from cli_agent.protocols import protocol_for
        from cli_agent.ui.headless import escape_for_terminal as esc

        s = self.session
        settings = s.settings.model_copy(update={"model": name})
        try:
            provider = self.provider_factory(settings)
        except errors.CliAgentError as exc:
            self.console.print(Text(f"model not changed: {esc(str(exc))}", style="red"))
            return
        protocol = ("plain" if settings.no_tools else settings.protocol if settings.protocol != "auto"
                    else "native" if provider.supports_native_tools() else "json")
        setup = s.agent.setup
        old, kept = s.provider, protocol == s.protocol
        setup.provider, setup.model = provider, name
        if hasattr(setup.planner, "settings"):
            setup.planner.settings = settings
        if not kept:
            setup.protocol = protocol_for(protocol)
            setup.planner.protocol = protocol  # type: ignore[attr-defined]
            s.agent.clear()
        s.provider, s.settings, s.protocol = provider, settings, protocol
        old.close()
        self.console.print(Text(f"model: {esc(name)} ({protocol} protocol); " + (
            "the conversation carries over" if kept else "a new conversation (the protocol changed)")))
        warm_up(provider)


def _clip(text: str, width: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[:width - 1] + "…"

"""The interactive REPL: `cli-agent` with no arguments.

A prompt_toolkit prompt (history in the user state dir, Ctrl-R search, Meta+Enter / Ctrl-J for a new line, tab
completion, a bottom toolbar) reads a message or a slash command (`ui.repl.commands.commands`); a message runs one
turn of the session's agent, drawn by `Renderer` and asked about by `TerminalApprover`. Ctrl-C during a turn
cancels it (the loop finishes the run cleanly) and returns to the prompt; Ctrl-C at an empty prompt says how to
quit, and a second one within two seconds quits; Ctrl-D quits. SIGTERM closes the session (so the trace is
complete) and leaves with 143 through `cli.py`.

The prompt comes first: the config, the session and the workflow commands are made behind it by `Startup`
(`cli_agent.ui.repl.startup`), which also warms up what the first turn needs (LiteLLM, httpx, Rich's Markdown); the
first line sent waits for them. The banner names the model and the workspace once they are known, above the first
answer; the toolbar shows them as soon as they are.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Collection, Iterable
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import errors
from cli_agent.ui.repl.start_model import onboarded, with_its_model
from cli_agent.ui.repl.startup import Startup, warm_up

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.config.settings import Loaded, Settings
    from cli_agent.contracts.events import Event, EventStream, RunFinished
    from cli_agent.session.session import ProviderFactory, Session

__all__ = ["Repl", "run_repl"]

QUIT_WINDOW_S = 2.0  # a second Ctrl-C at an empty prompt within this long quits
NO_TERMINAL = "no terminal for the REPL: pass -p TEXT, or -p - to read the task from stdin"


def run_repl(load: Callable[[], Loaded], *, provider_factory: ProviderFactory, resume: str | None = None,
             onboard: bool = False, ask_trust: Callable[[Callable[[], Loaded]], None] | None = None) -> int:
    """`load` gives the settings; `resume`: continue that session (session_index.LATEST for -c, or an id) instead of
    starting a new one. The session is made behind the first prompt (`Startup`), except one to continue, which the
    banner shows. `onboard` (no --model or --api-base given): when no model is configured either, say what is
    possible before any prompt (`ui.onboarding`). `ask_trust(load)`: the folder's trust question, asked once the
    model is settled (a REPL that cannot start for want of a model asks nothing). A bad config, a missing or damaged
    session, no model: the REPL ends with that one-line error (exit 2)."""
    if not sys.stdin.isatty():
        raise errors.UsageError(NO_TERMINAL)
    if resume is not None and onboard and not any(os.environ.get(v) for v in ("CLI_AGENT_MODEL",
                                                                               "CLI_AGENT_API_BASE")):
        load = with_its_model(load, resume)
    if onboard and not any(os.environ.get(v) for v in ("CLI_AGENT_MODEL", "CLI_AGENT_API_BASE", "CLI_AGENT_API_KEY")):
        load = onboarded(load)
    if ask_trust is not None:
        ask_trust(load)
    startup = Startup(load, provider_factory, resume=resume)
    try:
        code = Repl(startup, None, provider_factory).loop()
    finally:
        startup.close()
    if startup.error is not None:  # quit before the start-up failed: its error still decides the exit code
        raise startup.error
    return code


class Repl:
    """The REPL and the `CommandContext` its commands use."""

    def __init__(self, session: Session | Startup, console: Console | None, provider_factory: ProviderFactory, *,
                 approver: Any = None, prompt_input: Any = None, prompt_output: Any = None) -> None:
        """`session`: an open one, or the `Startup` that opens it behind the first prompt. `console`: None for a
        Rich console on stdout, made at first use (behind the prompt: Rich takes a while to import)."""
        from cli_agent.ui.repl.commands.builtin_commands import builtin_commands
        from cli_agent.ui.repl.commands.command_set import add_commands

        self.startup = session if isinstance(session, Startup) else Startup(session=session)
        self._announced = self.startup.session is not None  # an open session is announced by the banner
        self._console = console
        self.provider_factory = provider_factory
        self._approver = approver
        self.steps = 0
        self.commands = builtin_commands()
        self.notes = add_commands(self.commands, self) if self.startup.session is not None else []
        self._io = {"input": prompt_input, "output": prompt_output}
        self._prompt: Any = None
        self._keys: Any = None  # the keyboard while a turn runs (ui.keys.TurnKeys)
        self.queued: list[str] = []  # lines typed during a turn, sent next
        self._draft = ""  # a line typed during a turn but not finished: the next prompt starts with it
        self.last_folded: list[Any] = []  # the last turn's one-line calls, for /expand
        self._pastes: Any = None  # long pastes folded in the input (ui.pastes.Pastes)
        self._paths: Any = None  # the workspace's paths, for completion (ui.completion.PathIndex)

    @property
    def session(self) -> Session:
        """The session; the first use waits for it if it is still being made behind the prompt, and then says
        what the banner could not (the model, the workspace, the notes)."""
        if not self.startup.ready:
            self.console.print("(starting…)", style="dim", markup=False)
        session = self.startup.get()
        if not self._announced:
            self._announced = True
            self._announce(session)
        return session

    @property
    def settings(self) -> Settings:
        """The settings (None only until the start-up has loaded them)."""
        return self.startup.settings  # type: ignore[return-value]

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console

            self._console = Console(highlight=False)
        return self._console

    @property
    def approver(self) -> Any:
        if self._approver is None:
            from cli_agent.ui.repl.approve import TerminalApprover

            self._approver = TerminalApprover(self.console)
        return self._ask_paused

    @property
    def own_approver(self) -> Any:
        """The question about the changes of the user's own command (!COMMAND), worded for them."""
        from cli_agent.ui.repl.approve import TerminalApprover

        if self._approver is not None and not isinstance(self._approver, TerminalApprover):  # injected (tests)
            return self._ask_paused
        own = TerminalApprover(self.console, own=True)
        return lambda asked: self._ask_paused(asked, own)

    def _ask_paused(self, asked: Any, approver: Any = None) -> Any:
        """The approval question, with the turn's key reader paused (the question reads its own key)."""
        approver = approver or self._approver
        keys = self._keys
        if keys is None:
            return approver(asked)
        with keys.paused():
            return approver(asked)

    def _extend(self) -> None:
        """Behind the prompt: the command modules' commands (the workflows), registered into a copy of the registry
        that replaces it whole, so the completer never sees it half-made."""
        from cli_agent.ui.repl.commands.command_set import add_commands

        commands = self.commands.copy()
        self.notes = add_commands(commands, self)
        self.commands = commands

    def _notes(self, notes: Iterable[str]) -> None:
        from rich.text import Text

        from cli_agent.contracts.escape import escape_for_terminal as esc

        for note in notes:
            self.console.print(Text(esc(note), style="dim"))

    # -- the loop ----------------------------------------------------------------------------------------------

    def loop(self) -> int:
        """Read and run lines until the user quits; the exit code. The terminal does not echo keys for the whole
        REPL (ui.keys.no_echo): the prompt and the questions draw what is typed themselves, and keys typed while
        output is drawn (the start-up, a command, the wait before a turn) are kept for the next reader instead of
        landing inside it."""
        from cli_agent.ui.repl.keys import no_echo

        with no_echo(self._io["input"]):
            return self._loop()

    def _loop(self) -> int:
        if self.startup.resume is not None:  # the banner shows the conversation that goes on
            self.startup.start(self._extend)
            self.startup.get()  # a failure ends the REPL before the prompt
            self._announced = True
        self._banner()
        if self.startup.resumed is not None and self.startup.session is not None:
            self.show_resumed(self.startup.session, self.startup.resumed.trace_path)
        interrupted_at: float | None = None  # when Ctrl-C last left an empty prompt
        while True:
            try:
                text = self._next_queued() if self.queued else self.read()
            except KeyboardInterrupt:
                if interrupted_at is not None and time.monotonic() - interrupted_at < QUIT_WINDOW_S:  # the second
                    self._goodbye()
                    return 0
                interrupted_at = time.monotonic()
                self.console.print(f"press Ctrl-C again within {QUIT_WINDOW_S:g} s to quit (or Ctrl-D, /exit)",
                                   style="dim", markup=False)
                continue
            except EOFError:
                self._goodbye()
                return 0
            if text.strip() and self._handle(text):
                self._goodbye()
                return 0

    def _next_queued(self) -> str:
        """The next line typed ahead, echoed as if it had been typed at the prompt (its answer comes under it)."""
        from rich.text import Text

        from cli_agent.contracts.escape import escape_for_terminal as esc

        text = self.queued.pop(0)
        self.console.print(Text.assemble(("> ", "bold cyan"), esc(text)))
        return text

    def keep_typed(self, keys: Any) -> None:
        """What was typed while the keyboard was held (a turn, a /model check): each finished line is sent next,
        the unfinished one starts the next prompt."""
        if keys is not None:
            self.queued += keys.queued
            self._draft = keys.partial

    def _goodbye(self) -> None:
        """On the way out: the session's id and how to go on with it."""
        from rich.text import Text

        session = self.startup.session if self.startup.ready else None
        if session is None or not session.session_id or not session.agent.history:
            return
        self.console.print(Text.assemble(("session ", "dim"), (session.session_id, "bold"),
                                         (" · resume it with: ", "dim"), f"cli-agent --resume {session.session_id}"))

    def _handle(self, text: str) -> bool:
        """Run one line (a command or a message); True when the REPL should end. A Ctrl-C or a command's error
        returns to the prompt; a session that could not be opened ends the REPL with its error."""
        from rich.text import Text

        from cli_agent.contracts.escape import escape_for_terminal as esc
        from cli_agent.ui.repl.commands.commands import Outcome

        line = text.lstrip()
        try:
            self.session  # noqa: B018 - every line waits for the start-up, so commands and workflows are all there
            if line.startswith("/") and not line.startswith("//"):
                return self.commands.dispatch(self, text.strip()) is Outcome.EXIT
            if line.startswith("!") and line[1:].strip():
                from cli_agent.ui.repl.bang import run_bang

                run_bang(self, line[1:].strip())
                return False
            self.turn(line[1:] if line.startswith("//") else text)
        except KeyboardInterrupt:
            self.console.print("cancelled (Ctrl-C)", style="yellow", markup=False)
        except errors.CliAgentError as exc:
            if self.startup.error is not None:
                raise
            self.console.print(Text(esc(str(exc)), style="red"))
        return False

    def read(self) -> str:
        """The next line typed at the prompt, its folded pastes expanded (the screen keeps the folds)."""
        if self._prompt is None:
            self._prompt = self._make_prompt()
        draft, self._draft = self._draft, ""
        line = str(self._prompt.prompt(default=draft))
        folds = self._pastes.folded(line)
        if folds:
            self._say_dim(f"  (pasted text {', '.join(f'#{n}' for n in folds)} sent whole; Ctrl-O at the prompt "
                          f"shows a paste in full)")
        return str(self._pastes.expand(line))

    def _make_prompt(self) -> Any:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.key_binding import merge_key_bindings
        from prompt_toolkit.styles import Style

        from cli_agent.ui.repl.completion import PathIndex, ReplCompleter, bindings, history
        from cli_agent.ui.repl.pastes import Pastes

        self._pastes = Pastes()
        self._paths = PathIndex(self._workspace)
        prompt: Any = PromptSession(
            [("class:prompt", "> ")], history=history(self._say_dim), multiline=True,
            completer=ReplCompleter(self, self._paths), complete_while_typing=True,
            prompt_continuation=". ", bottom_toolbar=self._toolbar, enable_suspend=True,
            key_bindings=merge_key_bindings([bindings(self._cycle_mode), self._pastes.bindings()]),
            style=Style.from_dict({"prompt": "bold ansicyan"}), **{k: v for k, v in self._io.items() if v})
        warmed: list[bool] = []

        def after_first_render(_: Any) -> None:
            if warmed:
                return
            warmed.append(True)
            if self.startup.session is not None:
                warm_up(self.startup.session.provider)
                self._watch_mcp(prompt)
                return

            def failed(exc: BaseException) -> None:  # ends the prompt with the error, which `read` raises
                prompt.app.loop.call_soon_threadsafe(
                    lambda: prompt.app.exit(exception=exc) if prompt.app.is_running else None)

            def ready() -> None:
                prompt.app.invalidate()  # the toolbar shows the model
                self._watch_mcp(prompt)

            self.startup.start(self._extend, failed, ready)

        prompt.app.after_render += after_first_render
        return prompt

    def _watch_mcp(self, prompt: Any) -> None:
        """A broken MCP server is said above the prompt once its connection fails (ui.mcp_startup)."""
        session = self.startup.session
        if session is None or session.mcp is None:
            return
        from rich.text import Text

        from cli_agent.contracts.escape import escape_for_terminal as esc
        from cli_agent.ui.repl.mcp_startup import watch_failures

        def say(notes: list[str]) -> None:
            for note in notes:
                self.console.print(Text("! " + esc(note), style="yellow"))

        watch_failures(session.mcp, lambda: prompt.app, say)

    def workspace_paths(self, fragment: str) -> list[str]:
        """The workspace paths that match `fragment`, for completing a workflow's path parameter."""
        from cli_agent.ui.repl.completion import match_paths

        return match_paths(self._paths.paths(), fragment) if self._paths is not None else []

    def _workspace(self) -> Any:
        """The workspace for completing @paths, None while the start-up is still under way."""
        session = self.startup.session
        return session.workspace if session is not None and self.startup.ready else None

    def _toolbar(self) -> Any:
        from cli_agent.ui.repl.toolbar import toolbar

        ready = self.startup.ready and self.startup.error is None
        return toolbar(self.startup.settings, self.startup.session if ready else None, self.steps,
                       width=_columns(self._prompt))

    def _mode(self) -> str:
        """The approval mode, for the spinner's line (read from the live region's thread)."""
        session = self.startup.session
        return session.agent.policy.mode.value if session is not None else ""

    def _cycle_mode(self) -> None:
        """Shift+Tab: the next approval mode (ask → edits → all → ask); the toolbar shows it."""
        from cli_agent.ui.repl.toolbar import next_mode

        session = self.startup.session if self.startup.ready and self.startup.error is None else None
        if session is not None:
            session.set_mode(next_mode(session.agent.policy.mode))

    def _banner(self) -> None:
        """The version and the help hint; with an open session, its model and workspace (else `_announce` says
        them once the start-up is done, and the line is printed by prompt_toolkit: Rich loads behind the
        prompt)."""
        from cli_agent import __version__

        session = self.startup.session
        if session is None and self._console is None:
            from prompt_toolkit import print_formatted_text
            from prompt_toolkit.formatted_text import FormattedText

            print_formatted_text(FormattedText([("bold", f"cli-agent {__version__}"), ("", " · /help for help")]),
                                 output=self._io["output"])
            return
        from rich.text import Text

        line = Text(f"cli-agent {__version__}", style="bold")
        if session is not None:
            line.append(" · ").append_text(self._where(session))
        line.append(" · /help for help", style="dim")
        self.console.print(line)
        if session is not None:
            self._notes([*session.notes, *self.notes])

    def show_resumed(self, session: Session, trace_path: Any) -> None:
        """A resumed session's transcript on screen, and its totals in the toolbar."""
        from cli_agent.history.trace import read_trace
        from cli_agent.ui.view.resume_view import show_transcript

        try:
            summary = show_transcript(self.console, read_trace(trace_path), compact=self._compact)
        except errors.CliAgentError as exc:  # the conversation is back; only its picture is missing
            self.console.print(f"(the transcript cannot be shown: {exc})", style="dim", markup=False)
            return
        session.agent.usage = summary.usage
        self.steps = summary.steps

    def _say_dim(self, text: str) -> None:
        self.console.print(text, style="dim", markup=False)

    def _announce(self, session: Session) -> None:
        self.console.print(self._where(session))
        self._notes([*session.notes, *self.notes])

    def _where(self, session: Session) -> Any:
        """model · workspace [· resumed session ID: its first message]"""
        from rich.text import Text

        from cli_agent.contracts.escape import clip
        from cli_agent.contracts.escape import escape_for_terminal as esc
        from cli_agent.ui.repl.completion import short_path

        line = Text.assemble((esc(session.settings.model or "no model"), "cyan"), " · ",
                             esc(short_path(str(session.workspace.root))))
        entry = self.startup.resumed
        if entry is not None:
            line.append(f" · resumed session {esc(entry.id)}: {esc(clip(entry.first_message))}", style="green")
        return line

    def turn(self, text: str) -> RunFinished:
        from rich.text import Text

        from cli_agent.contracts.escape import escape_for_terminal as esc
        from cli_agent.ui.repl.commands.context_commands import compact_if_full
        from cli_agent.ui.repl.completion import attach_files

        message, notes = attach_files(text, self.session.workspace)
        for note in notes:
            self.console.print(Text("  " + esc(note), style="dim"))
        compact_if_full(self)
        return self.run_turn(message)

    # -- the CommandContext ------------------------------------------------------------------------------------

    def drive(self, events: EventStream) -> RunFinished:
        from cli_agent.contracts.events import RunFinished, StopReason
        from cli_agent.session.session import drive
        from cli_agent.ui.repl.keys import TurnKeys
        from cli_agent.ui.view.render import Renderer

        renderer = Renderer(self.console, compact=self._compact, typed=lambda: keys.shown() if keys else [],
                            mode=self._mode)
        keys = None
        draft, self._draft = self._draft, ""  # a line left unfinished before this turn goes on being typed
        try:
            with TurnKeys.open(on_change=renderer.refresh, on_shift_tab=self._cycle_mode, partial=draft) as keys:
                self._keys = keys
                finished = drive(events, self.session.trace, self._count, renderer)
        except KeyboardInterrupt:  # landed after the run had finished: the run is complete already
            finished = RunFinished(stop_reason=StopReason.CANCELLED, message="cancelled (Ctrl-C)")
        finally:
            self._keys = None
            renderer.close()
            self.keep_typed(keys)
            if keys is None:  # no keyboard was read: the unfinished line waits for the next prompt
                self._draft = draft
        self.last_folded = renderer.folded
        if finished.stop_reason is StopReason.TERMINATED:
            raise errors.TerminateSignal()
        return finished

    def _compact(self, tool: str) -> bool:
        """Whether a call of `tool` takes one line in the transcript: a tool that changes nothing."""
        registry = self.session.registry
        if tool not in registry.names():  # an MCP or unknown tool: only the known read-only ones are folded
            from cli_agent.ui.view.transcript import VERBS

            return tool in VERBS
        spec = registry.get(tool)
        return not spec.mutates and not spec.requires_approval

    def _count(self, event: Event) -> None:
        from cli_agent.contracts.events import RunFinished

        if isinstance(event, RunFinished):
            self.steps += event.steps

    def run_turn(self, prompt: str, *, only_tools: Collection[str] | None = None) -> RunFinished:
        return self.drive(self.session.run(prompt, self.approver, only_tools=only_tools))

    def ask(self, question: str, *, choices: Iterable[str] = (), default: str = "") -> str:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.completion import WordCompleter

        from cli_agent.contracts.escape import escape_for_terminal as esc

        words = list(choices)
        session: PromptSession[str] = PromptSession(**{k: v for k, v in self._io.items() if v})
        if self._keys is None:
            return session.prompt(esc(question), completer=WordCompleter(words) if words else None, default=default)
        with self._keys.paused():  # asked during a run (!COMMAND's output): the question reads its own keys
            return session.prompt(esc(question), completer=WordCompleter(words) if words else None, default=default)

    def replace_session(self, session: Session) -> None:
        """The REPL goes on with `session`; the old one is closed (its provider stays open if `session` uses it)."""
        old, self.startup.session = self.startup.session, session
        if old is None or old is session:
            return
        if old.provider is session.provider:
            old.trace.close()
        else:
            old.close()

    def choose(self, title: str, options: list[str], preview: Callable[[int], str] | None = None,
               selected: int = 0) -> int | None:
        from cli_agent.ui.repl.picker import pick

        if self._io["input"] is None and not sys.stdin.isatty():
            return None
        return pick(title, options, preview=preview, selected=selected, **{k: v for k, v in self._io.items() if v})


def _columns(prompt: Any) -> int:
    """The terminal's width as the prompt sees it (80 before it is drawn)."""
    try:
        return int(prompt.app.output.get_size().columns)
    except Exception:  # no prompt yet, or an output without a size
        return 80

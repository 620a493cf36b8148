"""What the REPL's commands use (the `CommandContext` of `ui.repl.commands.commands`, and `BangHost`): the live
session, the console, the command registry, the approval question, and the REPL's ways to run a turn (`drive`,
`run_turn`) and to ask the user (`ask`, `choose`). `Repl` (`ui.repl.repl`) is this plus the loop that reads lines.

The session may still be opening behind the first prompt (`Startup`): its first use waits for it, and then says
what the banner could not (the model, the workspace, the notes).

Imported where they are used, so that the first prompt does not wait for them (they load behind it):
- Rich, and what draws with it (`ui.view.*`, the approval question among them): Rich takes a while to import;
- the session's own modules (`session.session`, `history.trace`): `Startup` imports them in its thread.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import CompleteEvent, Completer, Completion, WordCompleter
from prompt_toolkit.document import Document

from cli_agent.contracts import AssistantMessage, RunFinished, StopReason, errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.answer import Typed, ask_key
from cli_agent.ui.repl.commands.builtin_commands import builtin_commands
from cli_agent.ui.repl.commands.command_set import add_commands
from cli_agent.ui.repl.completion import bindings
from cli_agent.ui.repl.keys import TurnKeys
from cli_agent.ui.repl.picker import pick
from cli_agent.ui.repl.start.banner import announce
from cli_agent.ui.repl.start.startup import Startup
from cli_agent.ui.repl.toolbar import next_mode
from cli_agent.ui.view import Renderer, TerminalApprover, changes_nothing, show_transcript, undone_runs

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.config import Settings
    from cli_agent.contracts import Event, EventStream, ImagePart
    from cli_agent.session import ProviderFactory, Session


class ReplContext:
    """The REPL's state and the `CommandContext` its commands use."""

    def __init__(self, session: Session | Startup, console: Console | None, provider_factory: ProviderFactory | None, *,
                 approver: Any = None, prompt_input: Any = None, prompt_output: Any = None) -> None:
        """`session`: an open one, or the `Startup` that opens it behind the first prompt. `console`: None for a
        Rich console on stdout, made at first use (behind the prompt: Rich takes a while to import)."""
        self.startup = session if isinstance(session, Startup) else Startup(session=session)
        self.announced = self.startup.session is not None  # an open session is announced by the banner
        self._console = console
        self._provider_factory = provider_factory
        self._approver = approver
        self.steps = 0
        self._measured: tuple[Any, int] = (None, 0)  # (session, tokens): the provider's last count (context_tokens)
        self.commands = builtin_commands()
        self.notes = add_commands(self.commands, self) if self.startup.session is not None else []
        self.io = {"input": prompt_input, "output": prompt_output}  # the prompt's own terminal (tests: a pipe)
        self._keys: Any = None  # the keyboard while a turn runs (ui.keys.TurnKeys)
        self.queued: list[str] = []  # lines typed during a turn, sent next
        self.draft = ""  # a line typed during a turn but not finished: the next prompt starts with it
        self.last_folded: list[Any] = []  # the last turn's one-line calls, for /expand
        self.last_thoughts: list[str] = []  # the last turn's thinking (a reasoning model's), for /expand
        self.last_turn: list[Any] = []  # the last turn in order (thoughts, plans, calls with results), for /expand

    @property
    def provider_factory(self) -> ProviderFactory:
        """The factory given, else the default one the session was opened with."""
        if self._provider_factory is not None:
            return self._provider_factory
        opened = self.session  # waits for it: the default factory is chosen when the session opens
        factory = self.startup.provider_factory
        assert opened is not None and factory is not None
        return factory

    @property
    def session(self) -> Session:
        """The session; the first use waits for it if it is still being made behind the prompt, and then says
        what the banner could not (the model, the workspace, the notes)."""
        if not self.startup.ready:
            self.console.print("(starting…)", style="dim", markup=False)
        session = self.startup.get()
        if not self.announced:
            self.announced = True
            announce(self, session)
        return session

    @property
    def settings(self) -> Settings:
        """The settings (None only until the start-up has loaded them)."""
        return self.startup.settings  # type: ignore[return-value]

    @property
    def console(self) -> Console:
        if self._console is None:
            from rich.console import Console  # deferred: Rich is not on a one-shot run's path

            self._console = Console(highlight=False)
        return self._console

    @property
    def console_made(self) -> bool:
        """The Rich console exists already (else a line printed before the prompt is printed without it)."""
        return self._console is not None

    @property
    def approver(self) -> Any:
        if self._approver is None:
            self._approver = TerminalApprover(self.console)
        return self._ask_paused

    @property
    def own_approver(self) -> Any:
        """The question about the changes of the user's own command (!COMMAND), worded for them."""
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

    def extend_commands(self) -> None:
        """Behind the prompt: the command modules' commands (the workflows), registered into a copy of the registry
        that replaces it whole, so the completer never sees it half-made."""
        commands = self.commands.copy()
        self.notes = add_commands(commands, self)
        self.commands = commands

    def keep_typed(self, keys: Any) -> None:
        """What was typed while the keyboard was held (a turn, a /model check): each finished line is sent next,
        the unfinished one starts the next prompt."""
        if keys is not None:
            self.queued += keys.queued
            self.draft = keys.partial

    def say_dim(self, text: str) -> None:
        self.console.print(text, style="dim", markup=False)

    # -- the approval mode (Shift+Tab, the toolbar, the spinner's line) ------------------------------------------

    def mode(self) -> str:
        """The approval mode, for the spinner's line (read from the live region's thread)."""
        session = self.startup.session
        return session.agent.policy.mode.value if session is not None else ""

    def cycle_mode(self) -> None:
        """Shift+Tab: the next approval mode (ask → plan → edits → all → ask); the toolbar shows it."""
        session = self.startup.session if self.startup.ready and self.startup.error is None else None
        if session is not None:
            session.set_mode(next_mode(session.agent.policy.mode))

    # -- running things -------------------------------------------------------------------------------------------

    def drive(self, events: EventStream) -> RunFinished:
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.session import drive

        renderer = Renderer(self.console, compact=self.compact_call, typed=lambda: keys.shown() if keys else [],
                            mode=self.mode)
        keys = None
        draft, self.draft = self.draft, ""  # a line left unfinished before this turn goes on being typed
        try:
            with TurnKeys.open(on_change=renderer.refresh, on_shift_tab=self.cycle_mode, partial=draft) as keys:
                self._keys = keys
                finished = drive(events, self.session.trace, self._count, renderer)
        except KeyboardInterrupt:  # landed after the run had finished: the run is complete already
            finished = RunFinished(stop_reason=StopReason.CANCELLED, message="cancelled (Ctrl-C)")
        finally:
            self._keys = None
            renderer.close()
            self.keep_typed(keys)
            if keys is None:  # no keyboard was read: the unfinished line waits for the next prompt
                self.draft = draft
        self.last_folded = renderer.folded
        self.last_turn = renderer.turn
        self.last_thoughts = renderer.thoughts
        if finished.stop_reason is StopReason.TERMINATED:
            raise errors.TerminateSignal()
        return finished

    def compact_call(self, tool: str) -> bool:
        """Whether a call of `tool` takes one line in the transcript: a tool that changes nothing."""
        registry = self.session.registry
        if tool not in registry.names():  # an MCP or unknown tool: only the known read-only ones are folded

            return changes_nothing(tool)
        spec = registry.get(tool)
        return not spec.mutates and not spec.requires_approval

    def _count(self, event: Event) -> None:
        if isinstance(event, RunFinished):
            self.steps += event.steps
        elif isinstance(event, AssistantMessage) and event.usage.prompt_tokens:
            self._measured = (self.session, event.usage.prompt_tokens + event.usage.completion_tokens)

    def context_tokens(self) -> int | None:
        """The conversation's size in tokens as the provider last counted it (its last reply's prompt and
        completion), None when it did not count or the conversation was replaced since (a compaction, /clear)."""
        session, tokens = self._measured
        return tokens if session is self.startup.session and tokens else None

    def conversation_replaced(self) -> None:
        """The conversation was compacted or started again: the provider's last count no longer holds."""
        self._measured = (None, 0)

    def run_turn(self, prompt: str, *, only_tools: Collection[str] | None = None,
                 images: tuple[ImagePart, ...] = ()) -> RunFinished:
        finished = self.drive(self.session.run(prompt, self.approver, only_tools=only_tools, images=images))
        return self._plan_approved(finished) if only_tools is None else finished

    def _plan_approved(self, finished: RunFinished) -> RunFinished:
        """A plan-mode turn that ended with a plan: the user approves it and picks the mode to go on in, and the
        plan runs as the next turn's checklist; or plan mode goes on."""
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.agent import ApprovalMode

        session = self.session
        if session.agent.policy.mode is not ApprovalMode.PLAN or finished.stop_reason is not StopReason.DONE \
                or not finished.answer.strip():
            return finished
        key = self.ask_key("Approve the plan? e yes, approve edits · d yes, ask for each change · "
                           "a yes, approve every change · n no, keep planning ", answers="edan")
        mode = _PLAN_ANSWERS.get(key)
        if mode is None:
            self.say_dim("still in plan mode: say what to change in the plan (Shift+Tab or /approval leaves it)")
            return finished
        session.set_mode(ApprovalMode(mode))
        self.say_dim(f"plan approved: carrying it out in {'default' if mode == 'ask' else mode} mode")
        return self.run_turn(PLAN_APPROVED)

    def show_resumed(self, session: Session, trace_path: Any) -> None:
        """A resumed session's transcript on screen, and its totals in the toolbar."""
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.history import read_trace

        try:
            trace = read_trace(trace_path)
            undone = undone_runs(trace, self._journal_turns(session), session.session_id)
            summary = show_transcript(self.console, trace, compact=self.compact_call, undone=undone)
        except errors.CliAgentError as exc:  # the conversation is back; only its picture is missing
            self.console.print(f"(the transcript cannot be shown: {exc})", style="dim", markup=False)
            return
        session.agent.usage = summary.usage
        self.steps = summary.steps

    @staticmethod
    def _journal_turns(session: Session) -> list[Any]:
        """The workspace's undo journal, to mark the turns undone since; none when it cannot be read."""
        try:
            return session.journal.turns() if session.journal is not None else []
        except (errors.CliAgentError, OSError):
            return []

    def replace_session(self, session: Session) -> None:
        """The REPL goes on with `session`; the old one is closed (its provider stays open if `session` uses it)."""
        old, self.startup.session = self.startup.session, session
        if old is None or old is session:
            return
        old.stop_processes()
        if old.provider is session.provider:
            old.trace.close()
        else:
            old.close()

    # -- asking the user ------------------------------------------------------------------------------------------

    def ask(self, question: str, *, choices: Iterable[str] = (), default: str = "", paths: bool = False) -> str:
        """One line; Tab completes `choices`, or with `paths` the workspace's paths (as `@path` does)."""
        words = list(choices)
        completer = _PathCompleter(self) if paths else WordCompleter(words) if words else None
        io = {k: v for k, v in self.io.items() if v}
        session: PromptSession[str] = PromptSession(key_bindings=bindings(), **io)  # Tab as at the prompt
        if self._keys is None:
            return session.prompt(esc(question), completer=completer, default=default)
        with self._keys.paused():  # asked during a run (!COMMAND's output): the question reads its own keys
            return session.prompt(esc(question), completer=completer, default=default)

    def ask_key(self, question: str, answers: str = "yn") -> str:
        """A question answered with one key (lower-cased; "\\r" for Enter, "" for Ctrl-C or Ctrl-D); keys typed
        before it was drawn are kept for the prompt instead of answering it."""
        typed = Typed()
        keys = self._keys
        if keys is None:
            answer = ask_key(esc(question), typed, input=self.io["input"], output=self.io["output"], answers=answers)
            self.queued += typed.queued
            self.draft += typed.partial
            return answer
        with keys.paused():  # asked during a run (!COMMAND's output): the question reads its own key
            answer = ask_key(esc(question), typed, input=self.io["input"], output=self.io["output"], answers=answers)
        keys.queued += typed.queued
        keys.partial += typed.partial
        return answer

    def choose(self, title: str, options: list[str], preview: Callable[[int], str] | None = None,
               selected: int = 0) -> int | None:
        if self.io["input"] is None and not sys.stdin.isatty():
            return None
        return pick(title, options, preview=preview, selected=selected, **{k: v for k, v in self.io.items() if v})


_PLAN_ANSWERS = {"e": "edits", "d": "ask", "a": "all"}  # the plan's answers, and the mode each goes on in
PLAN_APPROVED = ("(The user approved your plan. Carry it out now, step by step in its order, with the plan as your "
                 "checklist: mark each step with update_plan as you start and finish it.)")


class _PathCompleter(Completer):
    """The workspace's paths matching what is typed: a workflow's path parameter when it is asked for."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterator[Completion]:
        typed = document.text_before_cursor
        find = getattr(self.ctx, "workspace_paths", None)
        for path in find(typed) if find is not None else []:
            yield Completion(path, start_position=-len(typed), display=esc(path))

"""The REPL's prompt: a prompt_toolkit `PromptSession` with its history in the user state dir, Ctrl-R search,
Meta+Enter / Ctrl-J for a new line, tab completion of commands and @paths, long pastes folded, Shift+Tab for the
approval mode, and the bottom toolbar.

Its first drawing starts the session's start-up behind it (`Startup.start`); a start-up that fails ends the prompt
with its error, which `read` raises. A broken MCP server is said above the prompt once its connection fails.

Rich is imported where it draws, so the first prompt does not wait for it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.key_binding import merge_key_bindings
from prompt_toolkit.styles import Style
from rich.text import Text

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.completion import PathIndex, ReplCompleter, bindings, history, match_paths
from cli_agent.ui.repl.pastes import Pastes
from cli_agent.ui.repl.start.mcp_startup import watch_failures
from cli_agent.ui.repl.start.startup import warm_up
from cli_agent.ui.repl.toolbar import toolbar

if TYPE_CHECKING:
    from cli_agent.ui.repl.context import ReplContext


class PromptLine:
    """The prompt of one REPL (`repl`), made at the first `read`."""

    def __init__(self, repl: ReplContext) -> None:
        self.repl = repl
        self._prompt: Any = None
        self._pastes: Any = None  # long pastes folded in the input (ui.pastes.Pastes)
        self._paths: Any = None  # the workspace's paths, for completion (ui.completion.PathIndex)

    def read(self) -> str:
        """The next line typed at the prompt, its folded pastes expanded (the screen keeps the folds)."""
        if self._prompt is None:
            self._prompt = self._make()
        draft, self.repl.draft = self.repl.draft, ""
        line = str(self._prompt.prompt(default=draft))
        folds = self._pastes.folded(line)
        if folds:
            self.repl.say_dim(f"  (pasted text {', '.join(f'#{n}' for n in folds)} sent whole; Ctrl-O at the prompt "
                              f"shows a paste in full)")
        return str(self._pastes.expand(line))

    def _make(self) -> Any:
        repl = self.repl
        self._pastes = Pastes()
        self._paths = PathIndex(self._workspace)
        prompt: Any = PromptSession(
            [("class:prompt", "> ")], history=history(repl.say_dim), multiline=True,
            completer=ReplCompleter(repl, self._paths), complete_while_typing=True,
            prompt_continuation=". ", bottom_toolbar=self.toolbar, enable_suspend=True,
            key_bindings=merge_key_bindings([bindings(repl.cycle_mode), self._pastes.bindings()]),
            style=Style.from_dict({"prompt": "bold ansicyan"}), **{k: v for k, v in repl.io.items() if v})
        warmed: list[bool] = []

        def after_first_render(_: Any) -> None:
            if warmed:
                return
            warmed.append(True)
            if repl.startup.session is not None:
                warm_up(repl.startup.session.provider)
                self._watch_mcp(prompt)
                return

            def failed(exc: BaseException) -> None:  # ends the prompt with the error, which `read` raises
                prompt.app.loop.call_soon_threadsafe(
                    lambda: prompt.app.exit(exception=exc) if prompt.app.is_running else None)

            def ready() -> None:
                prompt.app.invalidate()  # the toolbar shows the model
                self._watch_mcp(prompt)

            repl.startup.start(repl.extend_commands, failed, ready)

        prompt.app.after_render += after_first_render
        return prompt

    def _watch_mcp(self, prompt: Any) -> None:
        """A broken MCP server is said above the prompt once its connection fails (ui.repl.start.mcp_startup)."""
        session = self.repl.startup.session
        if session is None or session.mcp is None:
            return

        def say(notes: list[str]) -> None:
            for note in notes:
                self.repl.console.print(Text("! " + esc(note), style="yellow"))

        watch_failures(session.mcp, lambda: prompt.app, say)

    def workspace_paths(self, fragment: str) -> list[str]:
        """The workspace paths that match `fragment`, for completing a workflow's path parameter."""
        return match_paths(self._paths.paths(), fragment) if self._paths is not None else []

    def _workspace(self) -> Any:
        """The workspace for completing @paths, None while the start-up is still under way."""
        session = self.repl.startup.session
        return session.workspace if session is not None and self.repl.startup.ready else None

    def toolbar(self) -> Any:
        startup = self.repl.startup
        ready = startup.ready and startup.error is None
        return toolbar(startup.settings, startup.session if ready else None, self.repl.steps,
                       width=_columns(self._prompt), measured=self.repl.context_tokens() if ready else None)


def _columns(prompt: Any) -> int:
    """The terminal's width as the prompt sees it (80 before it is drawn)."""
    try:
        return int(prompt.app.output.get_size().columns)
    except Exception:  # no prompt yet, or an output without a size
        return 80

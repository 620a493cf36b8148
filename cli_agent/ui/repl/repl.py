"""The interactive REPL: `cli-agent` with no arguments (`ui.repl.run.run_repl` starts it).

The prompt (`ui.repl.line`) reads a message or a slash command (`ui.repl.commands.commands`); a message runs one
turn of the session's agent, drawn by `Renderer` and asked about by `TerminalApprover`. Ctrl-C during a turn
cancels it (the loop finishes the run cleanly) and returns to the prompt; Ctrl-C at an empty prompt says how to
quit, and a second one within two seconds quits; Ctrl-D quits. SIGTERM closes the session (so the trace is
complete) and leaves with 143 through `cli.main`.

The prompt comes first: the config, the session and the workflow commands are made behind it by `Startup`
(`cli_agent.ui.repl.start.startup`), which also warms up what the first turn needs (LiteLLM, httpx, Rich's
Markdown); the first line sent waits for them. The banner names the model and the workspace once they are known,
above the first answer; the toolbar shows them as soon as they are. What commands use of the REPL is
`ReplContext`'s (`ui.repl.context`).

Rich is imported where it draws (`rich.text`), so the first prompt does not wait for it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cli_agent.contracts import errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.bang import run_bang
from cli_agent.ui.repl.commands.commands import Outcome
from cli_agent.ui.repl.commands.context_commands import compact_if_full
from cli_agent.ui.repl.completion import attach_files
from cli_agent.ui.repl.context import ReplContext
from cli_agent.ui.repl.keys import no_echo
from cli_agent.ui.repl.line import PromptLine
from cli_agent.ui.repl.start.banner import banner, goodbye
from cli_agent.ui.view import fit_lines

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.contracts import RunFinished
    from cli_agent.session import ProviderFactory, Session
    from cli_agent.ui.repl.start.startup import Startup

QUIT_WINDOW_S = 2.0  # a second Ctrl-C at an empty prompt within this long quits


class Repl(ReplContext):
    """The REPL: the loop that reads lines at its prompt and runs them, on top of the `CommandContext` its commands
    use (`ReplContext`)."""

    def __init__(self, session: Session | Startup, console: Console | None, provider_factory: ProviderFactory | None, *,
                 approver: Any = None, prompt_input: Any = None, prompt_output: Any = None) -> None:
        super().__init__(session, console, provider_factory, approver=approver, prompt_input=prompt_input,
                         prompt_output=prompt_output)
        self.line = PromptLine(self)

    def loop(self) -> int:
        """Read and run lines until the user quits; the exit code. The terminal does not echo keys for the whole
        REPL (ui.keys.no_echo): the prompt and the questions draw what is typed themselves, and keys typed while
        output is drawn (the start-up, a command, the wait before a turn) are kept for the next reader instead of
        landing inside it."""
        with no_echo(self.io["input"]):
            return self._loop()

    def _loop(self) -> int:
        if self.startup.resume is not None:  # the banner shows the conversation that goes on
            self.startup.start(self.extend_commands)
            self.startup.get()  # a failure ends the REPL before the prompt
            self.announced = True
        banner(self)
        if self.startup.resumed is not None and self.startup.session is not None:
            self.show_resumed(self.startup.session, self.startup.resumed.trace_path)
        interrupted_at: float | None = None  # when Ctrl-C last left an empty prompt
        while True:
            try:
                text = self._next_queued() if self.queued else self.read()
            except KeyboardInterrupt:
                if interrupted_at is not None and time.monotonic() - interrupted_at < QUIT_WINDOW_S:  # the second
                    goodbye(self)
                    return 0
                interrupted_at = time.monotonic()
                self.console.print(f"press Ctrl-C again within {QUIT_WINDOW_S:g} s to quit (or Ctrl-D, /exit)",
                                   style="dim", markup=False)
                continue
            except EOFError:
                goodbye(self)
                return 0
            if text.strip() and self._handle(text):
                goodbye(self)
                return 0

    def read(self) -> str:
        """The next line typed at the prompt, its folded pastes expanded."""
        return self.line.read()

    def _next_queued(self) -> str:
        """The next line typed ahead, echoed as if it had been typed at the prompt (its answer comes under it)."""
        text = self.queued.pop(0)
        self.console.print(Text.assemble(("> ", "bold cyan"), esc(text)))
        return text

    def _handle(self, text: str) -> bool:
        """Run one line (a command or a message); True when the REPL should end. A Ctrl-C or a command's error
        returns to the prompt; a session that could not be opened ends the REPL with its error."""
        line = text.lstrip()
        try:
            self.session  # noqa: B018 - every line waits for the start-up, so commands and workflows are all there
            if line.startswith("/") and not line.startswith("//"):
                return self.commands.dispatch(self, text.strip()) is Outcome.EXIT
            if line.startswith("!") and line[1:].strip():
                run_bang(self, line[1:].strip())
                return False
            self.turn(line[1:] if line.startswith("//") else text)
        except KeyboardInterrupt:
            self.console.print("cancelled (Ctrl-C)", style="yellow", markup=False)
        except errors.CliAgentError as exc:
            if self.startup.error is not None:
                raise
            self.console.print(Text(fit_lines(esc(str(exc)), self.console.width), style="red"))
        return False

    def turn(self, text: str) -> RunFinished:
        """One message: its @paths attached, the conversation compacted first when it is full, then the turn."""
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.session import images_for, with_images

        images = images_for(text, self.session.workspace, provider=self.session.provider)  # refused: one line
        message, notes = attach_files(with_images(text, images), self.session.workspace)  # labels by the words
        for note in [*notes, *(f"attached {i.label}" for i in images)]:
            self.console.print(Text("  " + esc(note), style="dim"))
        compact_if_full(self)
        return self.run_turn(message, images=images)

    def workspace_paths(self, fragment: str) -> list[str]:
        """The workspace paths that match `fragment`, for completing a workflow's path parameter."""
        return self.line.workspace_paths(fragment)


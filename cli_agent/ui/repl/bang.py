"""`!COMMAND` in the REPL: the user runs a command in the same sandbox as run_command. Its output is shown; its
change set is approved like any change and journaled (so /undo reverts it); its result goes with the next message
to the model unless the user says no."""

from __future__ import annotations

import json
import uuid
from typing import TYPE_CHECKING, Any, Protocol

from rich.text import Text

from cli_agent.contracts import ToolCall

if TYPE_CHECKING:
    from rich.console import Console

    from cli_agent.contracts import EventStream, RunFinished
    from cli_agent.session import Session

NOTE_BY = "The user (with !COMMAND)"
QUESTION = "Attach your command's output to your next message to the model? [Y/n, Esc: no] "


class BangHost(Protocol):
    """What `run_bang` needs of the front end that runs it (the REPL is one)."""

    @property
    def session(self) -> Session: ...
    @property
    def console(self) -> Console: ...
    @property
    def own_approver(self) -> Any: ...
    def drive(self, events: EventStream) -> RunFinished: ...
    def ask_key(self, question: str) -> str: ...


def run_bang(repl: BangHost, command: str) -> None:
    session = repl.session
    if "run_command" not in session.registry:
        repl.console.print(Text("!COMMAND is off: no command sandbox can be set up here; `cli-agent sandbox` says "
                                "why and what would enable it", style="red"))
        return
    arguments = {"command": command}
    call = ToolCall(f"user-{uuid.uuid4().hex[:8]}", "run_command", arguments, json.dumps(arguments))
    asked: list[bool] = []  # the answer, once the result is in: the run adds the note only on a yes

    def attach() -> bool:
        asked.append(not session.interactive or _yes(repl, QUESTION))
        return asked[-1]

    history = session.agent.history
    before = len(history)
    repl.drive(session.run_call(call, repl.own_approver, by=NOTE_BY, attach=attach))
    if asked and not asked[-1]:
        repl.console.print(Text("  not attached", style="dim"))
        return
    if len(history) > before:
        repl.console.print(Text("  the output goes with your next message", style="dim"))


def _yes(repl: BangHost, question: str) -> bool:
    """One key: yes (y, Enter) or no (n, Esc, Ctrl-C, Ctrl-D), as every question of the REPL; another
    printable key starts a line kept for the prompt (`ask_key`)."""
    return repl.ask_key(question) in ("y", "\r", "\n")

"""The approval question on a terminal: the call in a panel (with its diff), the answers on one line, one key.

    y yes · n no, stop the turn · f no, and tell the model what to do instead · a all … · t this tool …
    · w always: write a rule … · v view all

`n` denies and the turn stops (nothing later in it runs); `f` denies too, but asks for a line that goes to the model
as the call's answer, and the turn goes on with it. `a` and `t` grant for the rest of the session (a REPL only;
a one-shot run has no later turn to grant for). `w` ("always") shows the `[[permissions]]` rule that would allow the
like of this call (the command's first words, the file's folder, the site) and asks where to save it: `u` the user
config, `p` the user's own rules for this project (in cli-agent's state dir, never in the folder). `v` pages
through the whole new content or diff, then asks again.
The question is "Apply?" for a file change and "Run it?" for a call that changes no file (an MCP tool, a command
asked for before it runs). The answers are drawn with the question and erased with it: what stays is one line
saying what was decided. Ctrl-C, Ctrl-D, Enter and any other key mean no. Keys typed while the model was working
are thrown away before asking, so typing ahead can never answer the question.
"""

from __future__ import annotations

import io
import sys
import termios
import textwrap
from collections.abc import Callable
from typing import Any

from rich.console import Console, Group
from rich.padding import Padding
from rich.text import Text

from cli_agent.contracts import Answer, ApprovalAsked, Decision
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.view.change_view import change_body
from cli_agent.ui.view.command_panel import hanging
from cli_agent.ui.view.pager import page
from cli_agent.ui.view.render import call_panel

__all__ = ["SignalInterrupt", "TerminalApprover", "read_key"]

KEYS = {"y": Decision.YES, "yes": Decision.YES, "n": Decision.NO, "no": Decision.NO, "a": Decision.ALL,
        "all": Decision.ALL, "t": Decision.TOOL, "tool": Decision.TOOL, "f": Decision.FEEDBACK,
        "feedback": Decision.FEEDBACK, "w": Decision.ALWAYS, "always": Decision.ALWAYS}
PLACES = {"u": "user", "p": "project"}  # where "always" writes its rule
RULE_PROMPT = "Save the rule? "
NETWORK_RULE = "[sandbox.network]"  # "always" for a host the sandbox's proxy asked about: saved to the user config
VIEW = "v"
PROMPT = "Apply? "
RUN_PROMPT = "Run it? "  # a call that changes no file (an MCP tool, a command asked for before it runs)
_SAID = {Decision.YES: "yes", Decision.NO: "no: the turn stops", Decision.ALL: "yes to all, for this session",
         Decision.TOOL: "yes to this tool, for this session", Decision.QUIT: "no: the turn stops",
         Decision.FEEDBACK: "no, and the model is told: ", Decision.ALWAYS: "yes, and from now on: "}


def parse_answer(text: str, *, session_scoped: bool = True, always: bool = False) -> Decision:
    """An answer to the question; anything unrecognised is no (and so are `a`/`t`/`w` where they are not offered)."""
    decision = KEYS.get(text.strip().lower(), Decision.NO)
    if not session_scoped and decision in (Decision.ALL, Decision.TOOL):
        return Decision.NO
    if not always and decision is Decision.ALWAYS:
        return Decision.NO
    return decision


def render_call(asked: ApprovalAsked) -> Any:
    """The call of an approval question as a panel (kept for callers that print it themselves)."""
    return call_panel(asked.call, asked.change, index=asked.index, total=asked.total, about=asked.about,
                      changes=asked.changes)


OWN_PROMPT = "Apply your command's changes? "
_OWN_SAID = {Decision.YES: "yes: applied", Decision.NO: "no: the files stay as they were"}


def _answers(asked: ApprovalAsked, session_scoped: bool, own: bool = False) -> list[tuple[str, str]]:
    if own:  # the user's own command (!COMMAND): nothing to tell a model, nothing to grant
        out = [("y", "yes, apply them"), ("n", "no, leave the files as they are")]
        return [*out, (VIEW, "view all")] if asked.change is not None else out
    rest = asked.total - asked.index
    out = [("y", "yes"), ("n", "no, stop the turn"), ("f", "no, and tell the model what to do instead")]
    if asked.call.name == "attempts":  # the model's work is over: nothing to tell it, nothing to grant
        return [("y", "yes, apply the candidate's changes"), ("n", "no, keep the files as they are")]
    if session_scoped:
        later = "change" if changes_files(asked) else "call and change"
        everything = (f"yes to these {rest + 1} and every later {later} this session" if rest
                      else f"yes to this and every later {later} this session")
        if asked.scope:  # web_fetch: a grant is for the site, not everything nor every site
            out.append(("a", f"yes to every {esc(asked.call.name)} of {esc(asked.scope)} this session"))
        else:
            out += [("a", everything), ("t", f"yes to every {esc(asked.call.name)} call this session")]
    if asked.always:
        out.append(("w", "always: write a rule that allows the like of it (shown first)"))
    if asked.change is not None:
        out.append((VIEW, "view all"))
    return out


PLACE_NAMES = {"user": "your user config", "project": "your rules for this project (kept outside the folder)"}


def offers_always(asked: ApprovalAsked, own: bool = False) -> bool:
    """Whether `w` ("always": write a rule) is an answer: the agent said which rule, and the call is the model's."""
    return bool(asked.always) and not own and asked.call.name != "attempts"


def changes_files(asked: ApprovalAsked) -> bool:
    """Whether the call asked about changes files (a diff to apply) or only runs (an MCP tool, a command before it
    runs): the question is worded for what it does."""
    return asked.change is not None or bool(asked.changes)


def prompt_for(asked: ApprovalAsked, *, own: bool = False) -> str:
    """"Apply?" for a change, "Run it?" for a call that changes no file."""
    if own:
        return OWN_PROMPT
    return PROMPT if changes_files(asked) else RUN_PROMPT


def choices(asked: ApprovalAsked, *, session_scoped: bool = True, own: bool = False) -> Text:
    """The answers on one line that wraps to the width; "all" says exactly how much more than this call it grants.
    `own`: the user's own command's changes (yes, no, view)."""
    out = Text()
    for n, (key, text) in enumerate(_answers(asked, session_scoped, own)):
        if n:
            out.append(" · ", style="dim")
        out.append(key, style="bold cyan")
        out.append(" " + text)
    out.append("  (any other key: no)", style="dim")
    return out


def decided_line(decision: Decision, feedback: str = "", unrecognised: str = "", *, own: bool = False,
                 scope: str = "") -> Text:
    """What stays on screen once the question is answered; `scope`: the site an `a` for a web page grants."""
    mark = ("  ✓ ", "bold green") if decision.approves else ("  ✗ ", "bold yellow")
    words = _OWN_SAID.get(decision, _SAID[decision]) if own else _SAID[decision]
    if decision is Decision.ALL and scope:
        words = f"yes to every fetch of {esc(scope)}, for this session"
    said = Text.assemble(mark, (words, "green" if decision.approves else "yellow"))
    if decision is Decision.FEEDBACK:
        said.append(esc(feedback))
    if unrecognised:
        said.append(f"  ({esc(unrecognised)!r} is not an answer)", style="dim")
    return said


def flush_typeahead(stream: Any = None) -> None:
    """Discard keys typed before the question was asked (a terminal only)."""
    stream = stream or sys.stdin
    try:
        if stream.isatty():
            termios.tcflush(stream.fileno(), termios.TCIFLUSH)
    except (OSError, ValueError, AttributeError):
        pass


class SignalInterrupt(KeyboardInterrupt):
    """SIGINT arrived from outside while the question waited (Ctrl-C typed at it is a key, and means no)."""


def read_key(message: Any, *, answers: str | None = None, kept: list[str] | None = None, input: Any = None,
             output: Any = None) -> str:
    """One key press, without Enter; "" for Ctrl-C or Ctrl-D. `message` (text or prompt_toolkit formatted text)
    wraps to the width and is erased once a key is pressed. With `answers` (the keys that answer), another printable
    key does not answer: it starts a line, drawn after the question, that Enter ends; the line goes to `kept` and
    the question waits on (a sentence typed at it answers nothing and loses no key)."""
    while True:
        line: list[str] = []
        key = _one_key(message, answers, line, input, output)
        if line and kept is not None:
            kept.append("".join(line))
        if key is not None:
            return key


def _one_key(message: Any, answers: str | None, line: list[str], input: Any, output: Any) -> str | None:
    """The key that answered, or None when a typed line (in `line`) was ended with Enter."""
    # deferred: prompt_toolkit, only when a question is asked in a terminal
    from prompt_toolkit.application import Application
    from prompt_toolkit.formatted_text import to_formatted_text
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.layout import FormattedTextControl, Layout, Window

    bindings = KeyBindings()

    @bindings.add("<any>")
    def _key(event: Any) -> None:
        data = event.key_sequence[0].data
        typing = len(data) == 1 and data.isprintable() and data.lower() not in (answers or "")
        if answers is None or not (line or typing):
            event.app.exit(result=data)
        elif data in ("\r", "\n"):
            event.app.exit(result=None)
        elif data in ("\x7f", "\x08"):
            line.pop()
        elif len(data) == 1 and data.isprintable():
            line.append(data)

    @bindings.add("c-c")
    @bindings.add("c-d")
    def _no(event: Any) -> None:
        event.app.exit(result="")

    @bindings.add("<sigint>")
    def _signal(event: Any) -> None:  # a SIGINT sent to the process, not a key: the run is interrupted (130)
        event.app.exit(exception=SignalInterrupt())

    def shown() -> Any:
        asked = message
        if isinstance(message, str):  # plain words wrap between words, never inside one
            width = max(app.output.get_size().columns - 1, 20)
            asked = textwrap.fill(message, width, break_long_words=False, break_on_hyphens=False) + " "
        return [*to_formatted_text(asked), ("", "".join(line))] if line else asked

    app: Application[str | None] = Application(
        layout=Layout(Window(FormattedTextControl(shown), wrap_lines=True, dont_extend_height=True)),
        key_bindings=bindings, input=input, output=output, full_screen=False, erase_when_done=True)
    return app.run()


def _question(legend: Text, width: int, prompt: str = PROMPT) -> Any:
    """The legend, wrapped between words under a two-space indent to `width` (by Rich, as everything else on
    screen), then the prompt: prompt_toolkit formatted text."""
    # deferred: prompt_toolkit, only when a question is asked in a terminal
    from prompt_toolkit.formatted_text import ANSI

    out = io.StringIO()
    Console(file=out, width=max(width, 20), force_terminal=True, color_system="standard",
            highlight=False).print(Padding(legend, (0, 0, 0, 2)))
    return ANSI(out.getvalue() + "\x1b[1m" + prompt.rstrip() + "\x1b[0m ")


def _ask_terminal(message: Any) -> str:
    flush_typeahead()
    return read_key(message)


def _feedback_terminal(message: str) -> str:
    """The line for `f`, typed after `message` on one row: a line longer than the terminal scrolls sideways while it
    is typed (prompt_toolkit wraps only at a character, which would split a word); the answer's line says it whole,
    wrapped between words."""
    from prompt_toolkit import prompt  # deferred: prompt_toolkit, only when a question is asked in a terminal

    return prompt(message, wrap_lines=False)


class TerminalApprover:
    """Asks on the terminal. `read(question)` returns the answer (one key or a word) or raises EOFError /
    KeyboardInterrupt; `read_feedback(prompt)` returns the line for `f`; both are injectable for tests.
    `show_panel=False` when the front end already drew the call; `session_scoped=False` (a one-shot run) leaves
    out the answers that grant for the rest of the session; `own=True` asks about the user's own command's changes
    (!COMMAND): yes or no, worded for them, with no model to tell and nothing to grant."""

    def __init__(self, console: Any = None, read: Callable[[Any], str] | None = None, *, show_panel: bool = True,
                 session_scoped: bool = True, read_feedback: Callable[[str], str] | None = None,
                 own: bool = False) -> None:
        if console is None:
            console = Console(stderr=True)
        self.console = console
        self.read = read or _ask_terminal
        self.read_feedback = read_feedback or _feedback_terminal
        self.show_panel = show_panel
        self.session_scoped = session_scoped and not own
        self.own = own

    def __call__(self, asked: ApprovalAsked) -> Decision | Answer:
        if self.show_panel:
            self.console.print(render_call(asked))
        legend = choices(asked, session_scoped=self.session_scoped, own=self.own)
        prompt = prompt_for(asked, own=self.own)
        while True:
            answer = self._key_for(legend, prompt)
            if answer.strip().lower() == VIEW and asked.change is not None:
                self._page(asked)
                continue
            break
        decision = parse_answer(answer, session_scoped=self.session_scoped, always=offers_always(asked, self.own))
        where = self._where(asked) if decision is Decision.ALWAYS else ""
        if decision is Decision.ALWAYS and not where:
            decision = Decision.NO
        if asked.call.name == "attempts" and decision is Decision.FEEDBACK:
            decision = Decision.NO  # not offered: no model is left to tell
        if self.own and not decision.approves:
            decision = Decision.NO  # no `f`: there is no model to tell
        key = answer.strip()
        unrecognised = key if (decision is Decision.NO and key.lower() not in KEYS and key.isprintable()) else ""
        feedback = ""
        if decision is Decision.FEEDBACK:
            feedback = self._feedback()
            decision = Decision.FEEDBACK if feedback else Decision.NO
        said = decided_line(decision, feedback, unrecognised, own=self.own, scope=asked.scope)
        if where:
            said.append(f"a rule in {PLACE_NAMES[where]}")
        self.console.print(hanging(said[:4], said[4:]))
        return Answer(decision, feedback, where) if feedback or where else decision

    def _where(self, asked: ApprovalAsked) -> str:
        """The rule "always" writes, shown; then where to save it: "user", "project", or "" (not saved: no)."""
        self.console.print(Padding(Text.assemble(("the rule:\n", "bold"), asked.always.rstrip()), (0, 0, 0, 4)))
        if asked.always.startswith(NETWORK_RULE):  # a host: the network's rules live in the user config only
            return "user"
        legend = Text()
        for n, (key, place) in enumerate(PLACES.items()):
            if n:
                legend.append(" · ", style="dim")
            legend.append(key, style="bold cyan")
            legend.append(f" save it to {PLACE_NAMES[place]}")
        legend.append("  (any other key: no)", style="dim")
        return PLACES.get(self._key_for(legend, RULE_PROMPT).strip().lower(), "")

    def _key_for(self, legend: Text, prompt: str) -> str:
        """The key answered at a question whose choices `legend` shows; "" for Ctrl-C or Ctrl-D typed at it."""
        if self.read is not _ask_terminal:  # an injected reader gets the legend printed
            self.console.print(Padding(legend, (0, 0, 0, 2)))
        try:
            return self.read(_question(legend, self.console.width, prompt) if self.read is _ask_terminal else prompt)
        except SignalInterrupt:
            raise
        except (KeyboardInterrupt, EOFError):
            return ""

    def _feedback(self) -> str:
        try:
            self.console.print(hanging(Text("  "), Text("tell the model what to do instead (Enter: just no):")))
            return " ".join(self.read_feedback("  › ").split())
        except (KeyboardInterrupt, EOFError):
            return ""

    def _page(self, asked: ApprovalAsked) -> None:
        """The whole change, unfolded: in the pager ($PAGER, else less, with its colours) on a terminal, else
        printed."""
        assert asked.change is not None
        whole = Group(render_call(asked).title or "", change_body(asked.change, fold=False))
        if not self.console.is_terminal:
            self.console.print(whole)
            return

        page(self.console, whole)

"""`cli-agent` with no arguments: the checks and questions before the REPL's first prompt, then the REPL.

The model it starts with when the command line names none (`start_model`), the folder's trust question
(`trust_question`), then `Repl.loop` with the session opening behind the first prompt (`Startup`).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from cli_agent.contracts import errors
from cli_agent.ui.repl.answer import Typed
from cli_agent.ui.repl.repl import Repl
from cli_agent.ui.repl.start.start_model import onboarded, with_its_model
from cli_agent.ui.repl.start.startup import Startup

if TYPE_CHECKING:
    from cli_agent.config import Loaded
    from cli_agent.session import ProviderFactory

__all__ = ["run_repl"]

NO_TERMINAL = "no terminal for the REPL: pass -p TEXT, or -p - to read the task from stdin"


def run_repl(load: Callable[[], Loaded], *, provider_factory: ProviderFactory | None, resume: str | None = None,
             onboard: bool = False, ask_trust: Callable[[Callable[[], Loaded], Typed], bool] | None = None) -> int:
    """`load` gives the settings; `provider_factory`: None for the default (known once the agent's stack has loaded,
    behind the first prompt); `resume`: continue that session (session_index.LATEST for -c, or an id) instead of
    starting a new one. The session is made behind the first prompt (`Startup`), except one to continue, which the
    banner shows. `onboard` (no --model or --api-base given): when no model is configured either, say what is
    possible before any prompt (`start.onboarding`). `ask_trust(load, typed)`: the folder's trust question, asked once
    the model is settled (a REPL that cannot start for want of a model asks nothing); True when the user declined, and
    the banner then does not repeat what was declined. Keys typed before these
    questions were drawn start the first prompt. A bad config, a missing or damaged
    session, no model: the REPL ends with that one-line error (exit 2)."""
    if not sys.stdin.isatty():
        raise errors.UsageError(NO_TERMINAL)
    typed = Typed()
    if resume is not None and onboard and not any(os.environ.get(v) for v in ("CLI_AGENT_MODEL",
                                                                               "CLI_AGENT_API_BASE")):
        load = with_its_model(load, resume)
    if onboard and not any(os.environ.get(v) for v in ("CLI_AGENT_MODEL", "CLI_AGENT_API_BASE", "CLI_AGENT_API_KEY")):
        load = onboarded(load, typed)
    if ask_trust is not None and ask_trust(load, typed):
        load = _declined(load)
    startup = Startup(load, provider_factory, resume=resume)
    try:
        repl = Repl(startup, None, provider_factory)
        repl.keep_typed(typed)
        code = repl.loop()
    finally:
        startup.close()
    if startup.error is not None:  # quit before the start-up failed: its error still decides the exit code
        raise startup.error
    return code


def _declined(load: Callable[[], Loaded]) -> Callable[[], Loaded]:
    """`load`, its notes without the request to trust the folder the user has just declined."""
    return lambda: load().declined()

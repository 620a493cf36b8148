"""What the command line's commands share, without Typer: `-c`/`--resume` and the REPL's start. The one-shot run is
`cli.oneshot`'s, which loads the agent's stack; nothing here does, so the REPL draws its first prompt before it.

Both the Typer app (`cli.app`) and the lean path for plain root flags (`cli.main`) stand on this module, so a run
behaves the same whichever of the two parsed its arguments.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_agent.contracts import LATEST, AppState, errors
from cli_agent.fs import refuse_broad


def resume_from(continue_: bool, resume: str | None) -> str | None:
    """The session to continue: LATEST for -c, an id for --resume, None for a new one."""
    if continue_ and resume is not None:
        raise errors.UsageError("-c/--continue and --resume ID exclude each other: give one")
    if continue_:
        return LATEST
    return resume


def run_interactive(state: AppState, resume: str | None, *, onboard: bool) -> int:
    """No `-p`: the trust question for a new folder, then the REPL, which loads the settings behind its prompt.
    `onboard`: no model, server or key was given on the command line (the REPL may offer to set one up)."""
    from cli_agent.ui.repl import ask_trust, run_repl  # deferred: the REPL's stack (prompt_toolkit), only for the REPL

    def load() -> Any:
        from cli_agent.session import load_for  # deferred: the agent's stack loads behind the REPL's first prompt

        return load_for(state, announce=False)

    hint = (state.flags or {}).get("workspace")
    refuse_broad(Path(hint or ".").expanduser().absolute())  # before the REPL draws anything
    return run_repl(load, provider_factory=state.provider_factory, resume=resume, onboard=onboard,
                    ask_trust=lambda settled, typed: ask_trust(settled, hint, typed))  # once per folder+config

"""What the command line's commands share, without Typer: the state the root injects, the settings loaded from the
root's flags and a command's own, the provider factory, `-c`/`--resume`, the one-shot run and the REPL's start.

Both the Typer app (`cli_app`) and the lean path for plain root flags (`cli`) stand on this module, so a run
behaves the same whichever of the two parsed its arguments.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from typing import Any

from cli_agent.contracts import errors

__all__ = ["AppState", "default_provider", "flags_given", "load_for", "provider_factory", "resume_from",
           "run_interactive", "run_prompt"]


@dataclass
class AppState:
    """What the composition root injects into every command."""

    provider_factory: Any = None  # Callable[[Settings], Provider]; None: the default factory
    flags: dict[str, Any] | None = None  # the root's flags, which subcommand flags override
    output: str | None = None  # the loaded settings' --output, once known


def flags_given(**values: Any) -> dict[str, Any]:
    return {k: v for k, v in values.items() if v is not None}


def load_for(state: AppState, *, announce: bool = True, **sub_flags: Any) -> Any:
    """The settings, from the root's flags overridden by the subcommand's. `announce`: the loader's notes (a
    project config's ignored keys) go to stderr here; the REPL shows them in its banner instead."""
    from cli_agent.config.settings import load_settings

    flags = dict(state.flags or {}) | flags_given(**sub_flags)
    config_file = flags.pop("config", None)
    trust = flags.pop("trust", None)
    loaded = load_settings(flags, config_file=config_file, trust=None if trust is None else bool(trust))
    state.output = loaded.settings.output
    if announce and loaded.notes:
        from cli_agent.ui.view.escape import escape_for_terminal

        for note in loaded.notes:
            sys.stderr.write(f"cli-agent: {escape_for_terminal(note)}\n")
    return loaded


def provider_factory(state: AppState) -> Any:
    return state.provider_factory or default_provider


def default_provider(settings: Any) -> Any:
    from cli_agent.session.session import (
        default_provider_factory,  # imported when needed: the REPL draws its prompt first
    )

    return default_provider_factory(settings)


def resume_from(continue_: bool, resume: str | None) -> str | None:
    """The session to continue: LATEST for -c, an id for --resume, None for a new one."""
    if continue_ and resume is not None:
        raise errors.UsageError("-c/--continue and --resume ID exclude each other: give one")
    if continue_:
        from cli_agent.history.session_index import LATEST

        return LATEST
    return resume


def run_interactive(state: AppState, resume: str | None, *, onboard: bool) -> int:
    """No `-p`: the trust question for a new folder, then the REPL, which loads the settings behind its prompt.
    `onboard`: no model, server or key was given on the command line (the REPL may offer to set one up)."""
    from cli_agent.ui.repl.repl import run_repl
    from cli_agent.ui.repl.trust_question import ask_trust

    def load() -> Any:
        return load_for(state, announce=False)

    hint = (state.flags or {}).get("workspace")
    return run_repl(load, provider_factory=provider_factory(state), resume=resume, onboard=onboard,
                    ask_trust=lambda settled: ask_trust(settled, hint))  # once per folder+config


def run_prompt(state: AppState, prompt: str, resume: str | None) -> int:
    """`-p TEXT`: one task, then exit with its code. `state.flags` holds the root's flags."""
    from cli_agent.ui.headless.oneshot import run_one_shot

    loaded = load_for(state)
    return run_one_shot(loaded.settings, prompt, provider_factory=provider_factory(state), resume=resume,
                        notes=loaded.notes)

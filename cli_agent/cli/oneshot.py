"""`cli-agent -p TEXT`: one task, then exit with its code. Loaded only for a one-shot run (by `cli.main` or the Typer
app): it stands on the whole agent stack."""

from __future__ import annotations

from cli_agent.contracts import AppState
from cli_agent.session import load_for, provider_factory
from cli_agent.ui.headless import run_one_shot


def run_prompt(state: AppState, prompt: str, resume: str | None, *, images: list[str] | None = None) -> int:
    """`-p TEXT`: one task, then exit with its code. `state.flags` holds the root's flags; `images`: the files
    given with --image."""
    loaded = load_for(state)
    return run_one_shot(loaded.settings, prompt, provider_factory=provider_factory(state), resume=resume,
                        notes=loaded.notes, images=images or [])

"""A session: the settings turned into a workspace, a registry, a provider, an agent and a trace, by one builder
(`builder`: `assemble` makes the parts every front end stands on, and `journal_for` is the one place an undo journal
is opened; the CLI's sessions, `mcp serve`, `cli-agent prompt` and the tests all build through it); the `Session` a
front end holds (`session`: `open_session`, its runs, `drive` to feed a run's events to their sinks,
`switch_model`, `set_mode`, `add_note`, resuming); a sub-task's helper agent (`subtask`); and what every front end
opens one from (`launch`: the root's flags, the settings they load, the provider factory).

May import: mcp, history, agent and everything below them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.session.builder import assemble, journal_for, policy_for
    from cli_agent.session.images import images_for, with_images
    from cli_agent.session.launch import AppState, flags_given, load_for, provider_factory
    from cli_agent.session.session import (
        ProviderFactory,
        Session,
        default_provider_factory,
        drive,
        is_interactive,
        open_session,
        resume_into,
    )

__all__ = [
    "AppState",
    "ProviderFactory",
    "Session",
    "assemble",
    "default_provider_factory",
    "drive",
    "flags_given",
    "images_for",
    "is_interactive",
    "journal_for",
    "load_for",
    "open_session",
    "policy_for",
    "provider_factory",
    "resume_into",
    "with_images",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("assemble", "journal_for", "policy_for"):
        from cli_agent.session import builder

        return getattr(builder, name)
    if name in ("images_for", "with_images"):
        from cli_agent.session import images

        return getattr(images, name)
    if name in ("AppState", "flags_given", "load_for", "provider_factory"):
        from cli_agent.session import launch

        return getattr(launch, name)
    if name in (
        "ProviderFactory",
        "Session",
        "default_provider_factory",
        "drive",
        "is_interactive",
        "open_session",
        "resume_into",
    ):
        from cli_agent.session import session

        return getattr(session, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""A session: the settings turned into a workspace, a registry, a provider, an agent and a trace, by one builder
(`builder`: `assemble` makes the parts every front end stands on, and `journal_for` is the one place an undo journal
is opened; the CLI's sessions, `mcp serve`, `cli-agent prompt` and the tests all build through it); the `Session` a
front end holds (`session`: `open_session`, its runs, `drive` to feed a run's events to their sinks,
`switch_model`, `set_mode`, `add_note`, resuming); a sub-task's helper agent (`subtask`); and what every front end
opens one from (`launch`: the root's flags, the settings they load, the provider factory).

May import: mcp, history, agent and everything below them.
"""

from cli_agent.session.builder import *
from cli_agent.session.images import *
from cli_agent.session.launch import *
from cli_agent.session.session import *

__all__ = [
    "ProviderFactory", "Session", "assemble", "default_provider_factory", "drive",
    "images_for", "journal_for", "load_for", "open_session", "policy_for", "provider_factory",
    "resume_into", "with_images",
]

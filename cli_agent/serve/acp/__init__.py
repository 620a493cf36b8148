"""`cli-agent acp`: the Agent Client Protocol over stdio, so editors (Zed, JetBrains, Toad) drive the same agent.

`wire` carries JSON-RPC lines (a malformed one gets a JSON-RPC error, never a traceback); `updates` says how each
event of a run and each message of a resumed conversation look as ACP session updates; `turn` drives one run in a
worker thread and asks the client for approvals; `server` holds the sessions and answers the protocol's methods.
The official SDK (`acp`, about 0.4 s to import) is imported only here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.serve.acp.server import serve

__all__ = [
    "serve",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("serve",):
        from cli_agent.serve.acp import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""`cli-agent acp`: the Agent Client Protocol over stdio, so editors (Zed, JetBrains, Toad) drive the same agent.

`wire` carries JSON-RPC lines (a malformed one gets a JSON-RPC error, never a traceback); `updates` says how each
event of a run and each message of a resumed conversation look as ACP session updates; `turn` drives one run in a
worker thread and asks the client for approvals; `server` holds the sessions and answers the protocol's methods.
The official SDK (`acp`, about 0.4 s to import) is imported only here.
"""

from cli_agent.serve.acp.server import *

__all__ = ["serve"]

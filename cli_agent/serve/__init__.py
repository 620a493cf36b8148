"""cli-agent served to other programs: `mcp` (`cli-agent mcp serve`: the sandboxed file tools over stdio) and `acp/`
(`cli-agent acp`: the Agent Client Protocol, so editors drive the same agent).

A front end, beside ui/ and eval/: may import workflows, session and everything below them; never ui/, eval/ or cli/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.serve.mcp import serve_stdio

__all__ = [
    "serve_stdio",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("serve_stdio",):
        from cli_agent.serve import mcp

        return getattr(mcp, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

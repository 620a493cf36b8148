"""cli-agent served to other programs: `mcp` (`cli-agent mcp serve`: the sandboxed file tools over stdio) and `acp/`
(`cli-agent acp`: the Agent Client Protocol, so editors drive the same agent).

A front end, beside ui/ and eval/: may import workflows, session and everything below them; never ui/, eval/ or cli/.
"""

from cli_agent.serve.mcp import *

__all__ = ["serve_stdio"]

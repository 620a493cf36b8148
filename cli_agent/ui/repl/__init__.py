"""The interactive REPL, in layers (`.importlinter`'s `repl` contract), from the top: `run` (its entry: the terminal
check, onboarding, the trust question, then the loop), `repl` (the loop of prompts), the prompt line (`line`), the
command API its commands use (`context`), completion, the slash commands (`commands/`), the start-up pieces
(`start/`: what happens before and behind the first prompt), then the small parts they share: the toolbar, one-key
answers (`answer`), the picker, pastes, `!COMMAND` (`bang`), keys and `home_path`.

May import: view/ and the packages below ui/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.ui.repl.commands.mcp_commands import list_servers, test_server
    from cli_agent.ui.repl.commands.session_commands import print_sessions
    from cli_agent.ui.repl.run import run_repl
    from cli_agent.ui.repl.start.trust_question import ask_trust

__all__ = [
    "ask_trust",
    "list_servers",
    "print_sessions",
    "run_repl",
    "test_server",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("list_servers", "test_server"):
        from cli_agent.ui.repl.commands import mcp_commands

        return getattr(mcp_commands, name)
    if name in ("print_sessions",):
        from cli_agent.ui.repl.commands import session_commands

        return getattr(session_commands, name)
    if name in ("run_repl",):
        from cli_agent.ui.repl import run

        return getattr(run, name)
    if name in ("ask_trust",):
        from cli_agent.ui.repl.start import trust_question

        return getattr(trust_question, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

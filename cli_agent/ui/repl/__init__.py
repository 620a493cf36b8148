"""The interactive REPL, in layers (`.importlinter`'s `repl` contract), from the top: `run` (its entry: the terminal
check, onboarding, the trust question, then the loop), `repl` (the loop of prompts), the prompt line (`line`), the
command API its commands use (`context`), completion, the slash commands (`commands/`), the start-up pieces
(`start/`: what happens before and behind the first prompt), then the small parts they share: the toolbar, one-key
answers (`answer`), the picker, pastes, `!COMMAND` (`bang`), keys and `home_path`.

May import: view/ and the packages below ui/.
"""

from cli_agent.ui.repl.commands.mcp_commands import *
from cli_agent.ui.repl.commands.session_commands import *
from cli_agent.ui.repl.run import *
from cli_agent.ui.repl.start.trust_question import *

__all__ = ["ask_trust", "list_servers", "print_sessions", "run_repl", "test_server"]

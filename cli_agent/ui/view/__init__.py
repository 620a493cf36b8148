"""What the terminal front ends share: how things are drawn (the transcript's renderer, `render` and `transcript`; a
call's title and a change's diff, `change_view`; the command panel, the resume preview, the pager, the live region
while the model works, `working`, and the sandbox status line), and the approval question (`approve`).

May import: the packages below ui/; not repl/ or headless/.
"""

from cli_agent.ui.view.approve import *
from cli_agent.ui.view.checks_view import *
from cli_agent.ui.view.command_panel import *
from cli_agent.ui.view.expand_view import *
from cli_agent.ui.view.render import *
from cli_agent.ui.view.resume_view import *
from cli_agent.ui.view.transcript import *
from cli_agent.ui.view.wrapping import *

__all__ = [
    "ChangeTally", "Renderer", "SignalInterrupt", "TerminalApprover", "call_panel", "changes_nothing",
    "command_expanded", "expanded", "fit_lines", "hanging", "hung", "preview", "read_key", "result_line",
    "show_transcript", "undone_runs",
]

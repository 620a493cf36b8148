"""The front ends with no prompt: the one-shot run (`oneshot`: `-p`, `workflow run`, `tools run`), the printers of
`--output text|json|stream-json` (`printers`) the listings (`tools`, `prompt`, `workflows`, `skills`)
and what `cli-agent sandbox` says (`sandbox_status`).

May import: view/ and the packages below ui/.
"""

from cli_agent.ui.headless.listing import *
from cli_agent.ui.headless.oneshot import *
from cli_agent.ui.headless.sandbox_status import *

__all__ = [
    "list_skills", "list_workflows", "print_prompt", "print_tools", "run_one_shot", "run_tool", "run_workflow_command",
    "sandbox_report",
]

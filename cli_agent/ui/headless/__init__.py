"""The front ends with no prompt: the one-shot run (`oneshot`: `-p`, `workflow run`, `tools run`), the printers of
`--output text|json|stream-json` (`printers`) and the listings (`tools`, `prompt`, `workflows`).

May import: view/ and the packages below ui/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.ui.headless.listing import list_workflows, print_prompt, print_tools
    from cli_agent.ui.headless.oneshot import run_one_shot, run_tool, run_workflow_command

__all__ = [
    "list_workflows",
    "print_prompt",
    "print_tools",
    "run_one_shot",
    "run_tool",
    "run_workflow_command",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("list_workflows", "print_prompt", "print_tools"):
        from cli_agent.ui.headless import listing

        return getattr(listing, name)
    if name in ("run_one_shot", "run_tool", "run_workflow_command"):
        from cli_agent.ui.headless import oneshot

        return getattr(oneshot, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

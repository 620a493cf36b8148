"""What the terminal front ends share: how things are drawn (the transcript's renderer, `render` and `transcript`; a
call's title and a change's diff, `change_view`; the command panel, the resume preview, the pager, the live region
while the model works, `working`, and the sandbox status line), and the approval question (`approve`).

May import: the packages below ui/; not repl/ or headless/.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.ui.view.approve import SignalInterrupt, TerminalApprover, read_key
    from cli_agent.ui.view.command_panel import command_expanded, hanging
    from cli_agent.ui.view.render import Renderer, call_panel, hung
    from cli_agent.ui.view.resume_view import preview, show_transcript, undone_runs
    from cli_agent.ui.view.sandbox_status import sandbox_report
    from cli_agent.ui.view.transcript import changes_nothing, result_line
    from cli_agent.ui.view.wrapping import fit_lines

__all__ = [
    "Renderer",
    "SignalInterrupt",
    "TerminalApprover",
    "call_panel",
    "changes_nothing",
    "command_expanded",
    "fit_lines",
    "hanging",
    "hung",
    "preview",
    "read_key",
    "result_line",
    "sandbox_report",
    "show_transcript",
    "undone_runs",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("SignalInterrupt", "TerminalApprover", "read_key"):
        from cli_agent.ui.view import approve

        return getattr(approve, name)
    if name in ("command_expanded", "hanging"):
        from cli_agent.ui.view import command_panel

        return getattr(command_panel, name)
    if name in ("Renderer", "call_panel", "hung"):
        from cli_agent.ui.view import render

        return getattr(render, name)
    if name in ("preview", "show_transcript", "undone_runs"):
        from cli_agent.ui.view import resume_view

        return getattr(resume_view, name)
    if name in ("sandbox_report",):
        from cli_agent.ui.view import sandbox_status

        return getattr(sandbox_status, name)
    if name in ("changes_nothing", "result_line"):
        from cli_agent.ui.view import transcript

        return getattr(transcript, name)
    if name in ("fit_lines",):
        from cli_agent.ui.view import wrapping

        return getattr(wrapping, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

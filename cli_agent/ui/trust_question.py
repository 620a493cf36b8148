"""The REPL's question before its first prompt: trust this folder's project config?

Asked once per folder and config (a changed config asks again), only on a terminal, and only when the project
config sets something that needs trust; it shows exactly what trusting would change.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from cli_agent.config import Loaded

__all__ = ["ask_trust", "describe_withheld"]


def describe_withheld(withheld: dict[str, Any]) -> list[str]:
    """`key = value` lines for the keys a trusted config would set (an API key masked)."""
    from cli_agent.checked import Secret
    from cli_agent.config import mask_secret
    from cli_agent.ui.escape import escape_for_terminal

    lines = []
    for key, value in withheld.items():
        shown = mask_secret(value.get_secret_value()) if isinstance(value, Secret) else repr(value)
        lines.append(escape_for_terminal(f"  {key} = {shown}"))
    return lines


def ask_trust(load: Callable[[], Loaded], workspace_hint: str | None) -> None:
    """Ask on the terminal whether to trust the folder, and remember a yes. A config error is left for the REPL's
    own start-up to report."""
    from cli_agent import errors, paths
    from cli_agent.session import is_interactive

    if not is_interactive() or not paths.project_config_file(Path(workspace_hint or ".")).is_file():
        return
    try:
        loaded = load()
    except errors.CliAgentError:
        return
    if not loaded.withheld:
        return
    from cli_agent.trusted_folders import trust
    from cli_agent.ui.escape import escape_for_terminal

    ws = loaded.settings.workspace
    out = sys.stdout
    out.write(escape_for_terminal(f"This folder's project config ({paths.project_config_file(Path(ws))}) is not "
                                  f"trusted. Trusting it would also set:") + "\n")
    out.write("\n".join(describe_withheld(loaded.withheld)) + "\n")
    out.write("Trust this folder? Without trust these keys are ignored. [y/N] ")
    out.flush()
    try:
        answer = sys.stdin.readline().strip().lower()
    except (EOFError, KeyboardInterrupt):
        answer = ""
    if answer in ("y", "yes"):
        trust(Path(ws))
        out.write("trusted (cli-agent trust --revoke undoes it)\n")
    else:
        out.write("not trusted: the REPL starts without them\n")
    out.flush()

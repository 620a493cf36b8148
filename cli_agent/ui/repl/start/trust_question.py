"""The REPL's question before its first prompt: trust this folder's project config?

Asked once per folder and config (a changed config asks again), only on a terminal, and only when the project
config sets something that needs trust; it shows exactly what trusting would change.
"""

from __future__ import annotations

import datetime
import shutil
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import errors, escape_for_terminal, is_interactive
from cli_agent.fs import paths
from cli_agent.ui.repl.answer import ask_key

if TYPE_CHECKING:
    from cli_agent.config import Loaded, TrustEntry
    from cli_agent.ui.repl.answer import Typed

__all__ = ["ask_trust"]


def ask_trust(load: Callable[[], Loaded], workspace_hint: str | None, typed: Typed | None = None) -> bool:
    """Ask on the terminal whether to trust the folder (one key: y trusts, anything else does not), and remember a
    yes; True when the user declined (the question was asked, and not answered yes). The text wraps between words to
    the terminal's width; a config changed since it was trusted says what changed. Keys typed before the question
    was drawn go into `typed`, for the prompt. A config error is left for the REPL's own start-up to report."""
    if not is_interactive() or not paths.project_config_file(Path(workspace_hint or ".")).is_file():
        return False
    # deferred: the settings load behind the first prompt; here only for a folder with a project config
    from cli_agent.config import earlier_entry, trust_folder, withheld_lines

    try:
        loaded = load()
    except errors.CliAgentError:
        return False
    if not loaded.withheld:
        return False

    ws = Path(loaded.settings.workspace)
    lines = withheld_lines(loaded.withheld)
    config = paths.project_config_file(ws)
    shown = config.relative_to(ws) if config.is_relative_to(ws) else config  # the folder is the one it starts in
    for line in _question_text(shown, lines, earlier_entry(ws)):
        _say(line)
    if ask_key("Trust this folder? [y/N] ", typed) == "y":
        trust_folder(ws, tuple(line.strip() for line in lines))
        _say("trusted (cli-agent trust --revoke undoes it)")
        return False
    _say("not trusted: the REPL starts without them")
    return True


def _question_text(config: Path, lines: list[str], earlier: TrustEntry | None) -> list[str]:
    """What to say before asking: whether the config is new or changed (and how), and what trusting it sets."""
    if earlier is None:
        head = [escape_for_terminal(f"This folder's project config ({config}) is not trusted. Trusting it would "
                                    f"also set:"), *lines]
        return [*head, "Without trust these keys are ignored."]
    when = datetime.datetime.fromtimestamp(earlier.trusted_at).strftime("%Y-%m-%d %H:%M")
    said = [escape_for_terminal(f"This folder's project config ({config}) changed since you trusted it on {when}.")]
    now = [line.strip() for line in lines]
    if earlier.settings:
        added = [line for line in now if line not in earlier.settings]
        removed = [line for line in earlier.settings if line not in now]
        said.append("What needs trust changed:" if added or removed else
                    "What needs trust is the same; other lines of the file changed:")
        said += [f"  + {line}" for line in added] + [f"  - {escape_for_terminal(line)}" for line in removed]
        said += ["Trusting it would set:", *lines]
    else:
        said += ["Trusting it again would set:", *lines]
    return [*said, "Without trust these keys are ignored."]


def _say(text: str) -> None:
    """A line on stdout, wrapped between words to the terminal's width (continuation lines under its indent)."""
    width = max(20, shutil.get_terminal_size((80, 24)).columns - 1)
    indent = " " * (len(text) - len(text.lstrip()))
    sys.stdout.write(textwrap.fill(text, width, subsequent_indent=indent + "  ",
                                   break_long_words=False, break_on_hyphens=False) + "\n")
    sys.stdout.flush()

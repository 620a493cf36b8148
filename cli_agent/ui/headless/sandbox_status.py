"""`cli-agent sandbox`: what the command sandbox can do on this machine, or why there is none and what would
enable it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.config import NetworkRules
from cli_agent.facts import workspace_for
from cli_agent.fs import home_folder

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.sandbox import Shown

__all__ = ["sandbox_report"]


def sandbox_report(settings: Settings) -> tuple[str, int]:
    """The report and the exit code: 0 when commands can run (sandboxed, or explicitly unsandboxed), 1 when not."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.sandbox import BASE, Policy, dropped, probe, shown_trees

    box = settings.sandbox
    if box.mode == "off":
        return ('command sandbox: OFF (sandbox = "off" in the user config)\n'
                "  run_command and !COMMAND run unconfined in the workspace, each one asked for first;\n"
                "  their file changes are not staged, not shown as a change set and not undoable.\n"
                '  Remove sandbox = "off" to sandbox them again.'), 0
    capability = probe(fresh=True)
    if not capability.available:
        lines = [f"command sandbox: not available: {capability.reason}", f"  to enable it: {capability.remedy}",
                 "  run_command is not offered to the model and !COMMAND is refused until then.",
                 '  (sandbox = "off" in the user config runs commands unconfined, each asked for first.)']
        return "\n".join(lines), 1
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.sandbox import confine_locks, text_table

    policy = Policy(workspace=Path(settings.workspace), network=box.network is True, read_paths=tuple(box.read_paths),
                    write_paths=tuple(box.write_paths))
    gone = dropped(os.environ, box.env_allow)
    try:
        lock_notes = confine_locks(Path(settings.workspace), workspace_for(settings).locks).notes
    except Exception as exc:  # a broken facts.toml: said by `cli-agent facts`; the sandbox report still stands
        lock_notes = (f"locks not read: {exc}",)
    shown = shown_trees(policy)
    lines = [
        f"command sandbox: {capability.describe()}",
        "what a command can read, write and reach:",
        text_table(),
        *_environments(shown),
        "read-only trees here (besides /usr, /bin, /lib*, /etc, /opt):",
        *(f"  {p}" for p in shown.trees),
        *_network_lines(box.network),
        f"env:       only {', '.join(BASE)}"
        + (f", and (sandbox.env_allow) {', '.join(box.env_allow)}" if box.env_allow else ""),
        f"           {len(gone)} variable(s) dropped here" + (f": {', '.join(gone)}" if gone else ""),
        *lock_notes,
    ]
    if box.write_paths:
        lines.append(f"  writable directly (not staged): {', '.join(box.write_paths)}")
    return "\n".join(lines), 0


def _network_lines(network: bool | NetworkRules) -> list[str]:
    """Which network mode holds, and the rules of the proxy's."""
    if network is True:
        return ["network:   ALL of the host's (sandbox.network = true)"]
    from cli_agent.sandbox import NetRules  # deferred: as the rest of the sandbox here

    rules = network if isinstance(network, NetworkRules) else NetworkRules()
    lines = NetRules(tuple(rules.allow), tuple(rules.presets)).lines()
    if not lines:
        return ["network:   by rule, through cli-agent's proxy; no rule yet: every host refused (asked in the REPL)",
                '           ([sandbox.network] presets = ["python"] or allow = ["pypi.org"] in the user config)']
    return ["network:   by rule, through cli-agent's proxy ([sandbox.network]); other hosts refused (asked in the "
            "REPL)", *(f"           {line}" for line in lines)]


def _environments(shown: Shown) -> list[str]:
    """The environments PATH's folders belong to, and HOME's tool folders, as shown to commands."""
    home = home_folder()

    def tilde(path: Path | str) -> str:
        text = str(path)
        return "~" + text[len(str(home)):] if home is not None and (text + "/").startswith(f"{home}/") else text

    lines = ["environments shown whole, read-only (from PATH, VIRTUAL_ENV, CONDA_PREFIX and the toolchain "
             "variables):"]
    lines += [f"  {chain.kind:<11} {chain.where}" for chain in shown.chains] or ["  (none)"]
    lines.append("HOME's tool folders shown, read-only (the rest of HOME is empty; [sandbox] read_paths shows more):")
    lines += [f"  {tilde(place)} ({tool})" for tool, place in shown.home_tools] or ["  (none here)"]
    return lines


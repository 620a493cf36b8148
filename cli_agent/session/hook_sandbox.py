"""Where a project's hooks run: the command sandbox (`cli_agent.sandbox.boxed`), with the event on stdin and the
keeper that bounds every hook (`cli_agent.hooks.run_hook`). A trusted project's hook runs repository scripts that an
approved edit or a `git pull` can change, so it gets what a command gets: the workspace, the toolchains, a private
/tmp, no network, none of HOME's private files. What it writes in the workspace (a formatter's output) is applied
as it ended, each file through the workspace's own write path (protected files and locks refused, and named in the
hook's stderr). The user's own hooks stay the user's commands, run on the host."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from cli_agent.contracts import ToolError
from cli_agent.fs import Workspace
from cli_agent.hooks import HookOutcome, run_hook
from cli_agent.sandbox import Limits, boxed
from cli_agent.tools import CommandSetup


class SandboxedHooks:
    """The `HookBox` of a session whose commands run in the sandbox."""

    def __init__(self, setup: CommandSetup, workspace: Workspace) -> None:
        assert setup.capability is not None
        self.setup, self.workspace = setup, workspace

    def run(self, command: str, payload: bytes, cwd: Path, timeout_s: float, env: dict[str, str]) -> HookOutcome:
        setup = self.setup
        assert setup.capability is not None
        limits = Limits(timeout_s=timeout_s, max_processes=setup.policy.max_processes,
                        max_file_bytes=setup.policy.max_file_bytes)
        with boxed(command, setup.capability, setup.policy, limits, self._why_not, setup.env_allow) as box:
            out = run_hook(command, payload, cwd, timeout_s, {**box.env, **env}, argv=box.argv, inherit_env=False)
            changes = box.collect()
        refused = [f"{path}: {why}" for path, why in changes.refused]
        for change in sorted(changes.changes, key=lambda c: c.kind != "delete"):
            try:
                self.workspace.apply(change)
            except (ToolError, OSError) as exc:
                refused.append(f"{change.path}: {getattr(exc, 'message', None) or exc}")
        if not refused:
            return out
        said = "".join(f"\n(not applied: {line})" for line in refused)
        return replace(out, stderr=out.stderr + said)

    def _why_not(self, rel: str, planned: bool = False) -> str | None:
        """Why the hook may not change `rel` (protected, locked), or None: as for a command's change set."""
        try:
            (self.workspace.check_guarded if planned else self.workspace.check_writable)(rel)
        except ToolError as exc:
            return exc.message
        return None


def hook_box(setup: CommandSetup | None, workspace: Workspace) -> SandboxedHooks | None:
    """The sandbox a project's hooks run in, or None where commands run without one (then they do not run)."""
    if setup is None or setup.capability is None or not setup.capability.available:
        return None
    return SandboxedHooks(setup, workspace)

"""Running commands in the real command sandbox from tests (no mocks): a workspace, a policy, a run."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from cli_agent.fs.workspace import Workspace
from cli_agent.sandbox import CommandRun, Policy, probe, run_in_sandbox
from cli_agent.sandbox.process import Limits


def sandboxed(ws: Path, command: str, *, timeout_s: float = 60.0, max_file_bytes: int = 1 << 30,
              env_allow: tuple[str, ...] = (), **policy: Any) -> CommandRun:
    return run_policy(ws, Policy(workspace=ws, **policy), command, timeout_s=timeout_s,
                      max_file_bytes=max_file_bytes, env_allow=env_allow)


def run_policy(ws: Path, policy: Policy, command: str, *, timeout_s: float = 60.0, max_file_bytes: int = 1 << 30,
               env_allow: tuple[str, ...] = ()) -> CommandRun:
    """`command` run under `policy` (as a session's `command_setup` made it, say)."""
    capability = probe()
    assert capability.available, capability.reason  # the machines this runs on have user namespaces
    workspace = Workspace(ws)

    def check(rel: str, planned: bool = False) -> str | None:
        try:
            (workspace.check_guarded if planned else workspace.check_writable)(rel)
        except Exception as exc:  # ToolError: protected or locked
            return str(exc)
        return None

    running = run_in_sandbox(command, capability, policy,
                             Limits(timeout_s=timeout_s, max_file_bytes=max_file_bytes), check, env_allow)
    while True:
        try:
            next(running)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def processes_matching(needle: str) -> list[int]:
    """PIDs whose command line contains `needle` (read from /proc)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if needle in cmdline:
            found.append(int(entry))
    return found

"""run_command: a tool whose result is a `Staged` set of changes, approved and applied as one.

It runs in the command sandbox (`cli_agent.sandbox`) set up by the session (`CommandSetup`, made by
`tools.context.command_setup`); the command writes to a staging layer, and what it changed comes back as the change
set. With `sandbox = "off"` it runs in the workspace itself, asked for every time, and nothing is staged.

With `background` the command goes on after the call (`sandbox.Processes`, the session's table): the call returns
its process number and first output; `process_output` reads what it printed since, `stop_process` ends it. Once it
has ended, its change set comes back from whichever of the two sees it first, to be approved like a command's.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Generator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import Staged, ToolError
from cli_agent.sandbox import Limits, Process, Processes, run_in_sandbox, run_unsandboxed, wanting

if TYPE_CHECKING:
    from cli_agent.fs import Workspace
    from cli_agent.sandbox import CommandRun
    from cli_agent.tools.context import ToolContext


def _why_not(workspace: Workspace, rel: str, planned: bool = False) -> str | None:
    """Why `rel` may not be changed, or None; `planned`: the change set itself clears the way (see `collect`)."""
    try:
        if planned:
            workspace.check_guarded(rel)
        else:
            workspace.check_writable(rel)
    except ToolError as exc:
        return exc.message
    return None


def run_command(ctx: ToolContext, command: str, timeout_s: float | None = None, background: bool = False
                ) -> Generator[bytes, None, Staged]:
    """Yields the output as it comes; returns the result and the change set."""
    setup = ctx.commands
    if setup is None:
        raise ToolError("run_command is not available here: no command sandbox could be set up "
                        "(`cli-agent sandbox` says why)")
    if not command.strip():
        raise ToolError("command is empty: give the shell command line to run")
    if "\0" in command:
        raise ToolError("command contains a NUL byte; refused")
    if background:
        return (yield from _start_background(ctx, command))

    wanted = setup.default_timeout_s if timeout_s is None else float(timeout_s)
    timeout = min(wanted, setup.max_timeout_s)
    left = None if ctx.deadline is None else ctx.deadline - time.monotonic()
    if left is not None and left <= 0:
        raise ToolError("the run's deadline has passed: the command was not started")
    run_cut = left is not None and left < timeout  # the run's deadline comes first: the command ends there
    timeout = min(timeout, left) if left is not None else timeout
    limits = Limits(timeout_s=timeout, max_processes=setup.policy.max_processes,
                    max_file_bytes=setup.policy.max_file_bytes)
    if setup.capability is None:
        run = yield from run_unsandboxed(command, ctx.workspace.root, limits, setup.env_allow)
    else:
        if setup.net is not None:
            setup.net.refusals()  # what an earlier command was refused is its own
        run = yield from run_in_sandbox(command, setup.capability, setup.policy, limits,
                                        lambda rel, planned: _why_not(ctx.workspace, rel, planned),
                                        setup.env_allow, net=setup.net)
    data = run_data(command, run)
    refused = setup.net.refusals() if setup.net is not None and setup.capability is not None else []
    if refused:
        data["network"] = "; ".join(refused)  # the hosts the proxy refused, and the setting that would allow each

    missing = wanting(run.outcome.output, run.outcome.exit_code, os.environ, setup.env_allow)
    if missing is not None:
        data["environment"] = missing  # the dropped variables, said only where a command failed for want of one
    read_only = read_only_note(run.outcome.output, run.outcome.exit_code, ctx.workspace.root) \
        if setup.capability is not None else None
    if read_only is not None:
        data["read_only"] = read_only
    if run_cut:
        data["note"] = f"cut at the run's deadline ({timeout:.1f} s left of the run when it started)"
    elif wanted > timeout:
        data["note"] = f"timeout_s {wanted:g} is over the configured maximum; {timeout:g} s was used"
    return Staged(data, run.changes.changes, run.changes.removed_dirs, run.changes.refused)


_READ_ONLY = re.compile(r"""['"]?(/[^\s'":]+)['"]?: Read-only file system|Read-only file system: ['"](/[^'"]+)['"]""")


def read_only_note(output: str, exit_code: int | None, workspace: Path) -> str | None:
    """For a command that failed writing outside the workspace (a venv elsewhere, a cache): the folder, and the
    setting that lets commands change it in place; None when it did not fail that way."""
    if not exit_code or "Read-only file system" not in output:
        return None
    found = _READ_ONLY.search(output)
    if found is None:
        return None
    path = Path(found.group(1) or found.group(2))
    root = Path(os.path.realpath(workspace))
    if path == root or root in path.parents:
        return None
    folder = next((p for p in (path, *path.parents) if (p / "pyvenv.cfg").is_file()), path.parent)
    return (f"{path} is read-only to commands (outside the workspace): to let them change {folder} in place, add "
            f"it to [sandbox] write_paths in the user config")


def run_data(command: str, run: CommandRun) -> dict[str, Any]:
    out = run.outcome
    data: dict[str, Any] = {"command": command, "exit_code": out.exit_code, "duration_s": out.duration_s,
                            "timed_out": out.timed_out, "output": out.output, "output_bytes": out.output_bytes,
                            "sandboxed": run.sandboxed}
    if run.sandboxed:
        data["changes"] = run.changes.to_dict()
    else:
        data["changes"] = {"summary": "not tracked: the command ran without the sandbox (sandbox = \"off\") and "
                                      "wrote to the workspace directly"}
    return data



def _processes(ctx: ToolContext) -> Processes:
    setup = ctx.commands
    if setup is None or setup.processes is None:
        raise ToolError("background processes need the command sandbox, and this session has none "
                        "(`cli-agent sandbox` says why)")
    return setup.processes


def _start_background(ctx: ToolContext, command: str) -> Generator[bytes, None, Staged]:
    processes = _processes(ctx)
    process = processes.start(command, lambda rel, planned: _why_not(ctx.workspace, rel, planned))
    yield from processes.first_output(process)
    return _report(processes, process)


def _report(processes: Processes, process: Process) -> Staged:
    """What it printed since the last read and how it stands; once it has ended, its change set (handed out once:
    approved and applied, or discarded, by the caller)."""
    output, dropped = process.ring.since_last()
    data = process.status()
    data["output"] = output
    if dropped:
        data["output_dropped_bytes"] = dropped
    if process.running:
        return Staged(data)
    changes = process.settle()
    data["changes"] = changes.to_dict()
    data.pop("pending_changes", None)
    process.changes_taken = True
    processes.forget(process.number)
    return Staged(data, changes.changes, changes.removed_dirs, changes.refused)


def process_output(ctx: ToolContext, process: int) -> Staged:
    """What background process `process` printed since the last read, whether it runs, its exit code."""
    processes = _processes(ctx)
    return _report(processes, processes.get(process))


def stop_process(ctx: ToolContext, process: int) -> Staged:
    """End background process `process` and everything it started; its change set comes back to be approved."""
    processes = _processes(ctx)
    return _report(processes, processes.stop(process))

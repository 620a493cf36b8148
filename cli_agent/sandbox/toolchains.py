"""The user's toolchains, as a command needs them: each folder on PATH that belongs to an environment brings the
whole environment, and the interpreter it was made from.

- a venv (`bin/` with `pyvenv.cfg` beside it; uv, poetry, hatch, pipenv, virtualenvwrapper and tox make these)
  and `VIRTUAL_ENV`: the venv, the base interpreter its `pyvenv.cfg` names (`home`, `executable`), and the
  folders its `.pth` files, `.egg-link`s and editable installs' finders add to `sys.path`;
- a conda env (`conda-meta/` beside `bin/`) and `CONDA_PREFIX`, a Python prefix (`lib/python3.*/os.py`: a pyenv
  version, a uv-installed Python, `/usr/local`), each with its `.pth` folders;
- pyenv (`PYENV_ROOT`, its shims), `node_modules/.bin`, a Node prefix (nvm, volta, a global npm prefix) and
  `NVM_DIR`, cargo (`CARGO_HOME`) and rustup (`RUSTUP_HOME`), Go (`GOROOT`, `GOPATH`, `GOMODCACHE`), `JAVA_HOME`.

Nothing is run to find them: the user's interpreter is never started outside the sandbox. Every tree is spelt as
the user's shell spells it; `layout` resolves links, shows each real tree read-only, recreates the links on the way
and keeps every masking rule over them, and masks the credentials an environment keeps at its root
(`PREFIX_SECRETS`: a venv's `pip.conf`, a Node prefix's `etc/npmrc`, a conda env's `.condarc`).
"""

from __future__ import annotations

import ast
import glob
import os
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

from cli_agent.contracts import dataclass

_PTH_FILES = 200  # .pth files read per site-packages
_PTH_BYTES = 64 << 10
_FINDER_BYTES = 256 << 10
_CFG_BYTES = 16 << 10
_PYENV = ("bin", "libexec", "plugins", "shims", "versions", "pyenv.d", "version")
_RUSTUP = ("toolchains", "settings.toml", "update-hashes")
# What an environment's own tools read from its root and may hold a password or a token in: pip (`pip.conf`,
# `pip.ini`), npm (`etc/npmrc`), conda (`.condarc`, `condarc`, `condarc.d/`), and the usual login files
PREFIX_SECRETS = ("pip.conf", "pip.ini", "etc/npmrc", ".npmrc", ".condarc", "condarc", "condarc.d", ".pypirc",
                  ".netrc", ".yarnrc", ".yarnrc.yml")
_MAPPING = re.compile(r"^MAPPING\s*(?::[^=\n]*)?=\s*(\{.*?\})\s*$", re.MULTILINE | re.DOTALL)


@dataclass(frozen=True)
class Toolchain:
    kind: str  # "venv", "conda env", "python", "pyenv", "node_modules", "node", "nvm", "cargo", "rustup", "go", ...
    where: str  # the environment, as spelt
    trees: tuple[str, ...]  # the folders and files to show, as spelt


def toolchains(path_env: str, env: Mapping[str, str], home: Path | None, workspace: str | None = None
               ) -> tuple[Toolchain, ...]:
    """The environments that PATH's folders and the toolchain variables of `env` belong to, each once. One inside
    the `workspace` (real) is shown as part of it; of what its files name, which the repository may have written,
    only the Python it was made from is taken (a folder that holds a Python's standard library)."""
    found: dict[tuple[str, str], Toolchain] = {}
    for folder in path_env.split(os.pathsep):
        if folder and os.path.isabs(folder) and os.path.isdir(folder):
            for chain in _of_folder(os.path.normpath(folder), env, home):
                found.setdefault((chain.kind, chain.where), chain)
    for chain in _of_variables(env, home):
        found.setdefault((chain.kind, chain.where), chain)
    if workspace is None:
        return tuple(found.values())
    return tuple(Toolchain(c.kind, c.where, tuple(t for t in c.trees if _python_prefix(t)))
                 if _within(os.path.realpath(c.where), workspace) else c for c in found.values())


def prefix_secrets(roots: Iterable[Path]) -> list[Path]:
    """The credential files (`PREFIX_SECRETS`) at the root of each of `roots` (environments, or trees that may be)."""
    return [root / name for root in roots for name in PREFIX_SECRETS if os.path.lexists(root / name)]


def _of_folder(folder: str, env: Mapping[str, str], home: Path | None) -> Iterator[Toolchain]:
    parent = os.path.dirname(folder)
    name = os.path.basename(folder)
    if name == ".bin" and os.path.basename(parent) == "node_modules":
        yield Toolchain("node_modules", parent, (parent,))
        return
    if name in ("bin", "Scripts") and parent != "/":
        prefix = _python_env(parent)
        if prefix is not None:
            yield prefix
        elif os.path.isdir(os.path.join(parent, "lib", "node_modules")) and _has(folder, "node"):
            yield Toolchain("node", parent, (parent,))
        elif os.path.isdir(os.path.join(parent, "src", "runtime")) and _has(folder, "go"):
            yield Toolchain("go", parent, (parent,))
        elif _has(folder, "cargo") and (os.path.isdir(os.path.join(parent, "registry")) or _has(folder, "rustup")):
            yield _cargo(parent)
            yield _rustup(env.get("RUSTUP_HOME") or (str(home / ".rustup") if home else ""))
    pyenv_root = env.get("PYENV_ROOT") or (str(home / ".pyenv") if home else "")
    if pyenv_root and _within(folder, pyenv_root) and not _within(folder, os.path.join(pyenv_root, "versions")):
        yield _pyenv(pyenv_root)
    gopath = (env.get("GOPATH") or (str(home / "go") if home else "")).split(os.pathsep)[0]
    if gopath and folder == os.path.join(gopath, "bin"):
        yield Toolchain("go path", gopath, (folder, env.get("GOMODCACHE") or os.path.join(gopath, "pkg", "mod")))


def _of_variables(env: Mapping[str, str], home: Path | None) -> Iterator[Toolchain]:
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX"):
        prefix = env.get(name)
        chain = _python_env(prefix) if prefix and os.path.isabs(prefix) else None
        if chain is not None:
            yield chain
    if env.get("PYENV_ROOT") and os.path.isdir(env["PYENV_ROOT"]):
        yield _pyenv(env["PYENV_ROOT"])
    nvm = env.get("NVM_DIR")
    if nvm and os.path.isdir(nvm):
        yield Toolchain("nvm", nvm, tuple(os.path.join(nvm, n) for n in ("versions", "alias", "nvm.sh")))
    if env.get("CARGO_HOME") and os.path.isdir(env["CARGO_HOME"]):
        yield _cargo(env["CARGO_HOME"])
    if env.get("RUSTUP_HOME") and os.path.isdir(env["RUSTUP_HOME"]):
        yield _rustup(env["RUSTUP_HOME"])
    for name, kind in (("GOROOT", "go"), ("GOMODCACHE", "go modules"), ("JAVA_HOME", "java")):
        if env.get(name) and os.path.isabs(env[name]) and os.path.isdir(env[name]):
            yield Toolchain(kind, env[name], (env[name],))
    gopath = env.get("GOPATH", "").split(os.pathsep)[0]
    if gopath and os.path.isabs(gopath) and os.path.isdir(gopath):
        yield Toolchain("go path", gopath, (os.path.join(gopath, "bin"), os.path.join(gopath, "pkg", "mod")))


def _has(folder: str, program: str) -> bool:
    return os.path.lexists(os.path.join(folder, program))


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _pyenv(root: str) -> Toolchain:
    return Toolchain("pyenv", root, tuple(os.path.join(root, n) for n in _PYENV))


def _cargo(root: str) -> Toolchain:
    return Toolchain("cargo", root, tuple(os.path.join(root, n) for n in ("bin", "registry", "git")))


def _rustup(root: str) -> Toolchain:
    return Toolchain("rustup", root, tuple(os.path.join(root, n) for n in _RUSTUP) if root else ())


# -- Python environments -------------------------------------------------------------------------------------------

def _python_env(prefix: str) -> Toolchain | None:
    """A venv, a conda env or a Python prefix at `prefix`, with what its interpreter puts on `sys.path`."""
    cfg = os.path.join(prefix, "pyvenv.cfg")
    if os.path.isfile(cfg):
        values = _cfg(cfg)
        bases = _bases(prefix, values)
        trees = [prefix, *bases, *_pth_folders(prefix)]
        if values.get("include-system-site-packages", "").lower() == "true":
            trees += [p for base in bases for p in _pth_folders(base)]
        return Toolchain("venv", prefix, tuple(dict.fromkeys(trees)))
    if os.path.isdir(os.path.join(prefix, "conda-meta")):
        return Toolchain("conda env", prefix, (prefix, *_pth_folders(prefix)))
    if _python_prefix(prefix):
        return Toolchain("python", prefix, (prefix, *_pth_folders(prefix)))
    return None


def _python_prefix(prefix: str) -> bool:
    """Whether `prefix` holds a Python's standard library (`lib/python3.*/os.py`)."""
    return bool(glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*", "os.py")))


def _cfg(path: str) -> dict[str, str]:
    """`key = value` lines of a `pyvenv.cfg`, keys lower-cased."""
    try:
        with open(path, "rb") as fh:
            text = fh.read(_CFG_BYTES).decode("utf-8", errors="replace")
    except OSError:
        return {}
    pairs = (line.split("=", 1) for line in text.splitlines() if "=" in line)
    return {k.strip().lower(): v.strip() for k, v in pairs}


def _bases(prefix: str, values: Mapping[str, str]) -> list[str]:
    """The prefixes of the interpreter a venv was made from: `home`'s, `executable`'s, and where `bin/python` leads."""
    out: list[str] = []
    home = values.get("home", "")
    if os.path.isabs(home):
        out.append(os.path.dirname(home) if os.path.basename(home) in ("bin", "Scripts") else home)
    for key in ("executable", "base-executable"):
        exe = values.get(key, "")
        if os.path.isabs(exe):
            out.append(os.path.dirname(os.path.dirname(os.path.realpath(exe))))
    for python in sorted(glob.glob(os.path.join(glob.escape(prefix), "bin", "python*"))):
        real = os.path.realpath(python)
        if not _within(real, os.path.realpath(prefix)):
            out.append(os.path.dirname(os.path.dirname(real)))
    return [p for p in dict.fromkeys(out) if p != "/" and _python_prefix(p)]


def _pth_folders(prefix: str) -> list[str]:
    """The folders the `.pth` files, `.egg-link`s and editable finders of `prefix`'s site-packages add (bounded)."""
    out: list[str] = []
    for site in glob.glob(os.path.join(glob.escape(prefix), "lib", "python3*", "site-packages")):
        try:
            names = sorted(os.listdir(site))
        except OSError:
            continue
        pth = [n for n in names if n.endswith((".pth", ".egg-link"))][:_PTH_FILES]
        finders = [n for n in names if n.startswith("__editable__") and n.endswith("_finder.py")][:_PTH_FILES]
        for name in pth:
            out += _pth_lines(site, name)
        for name in finders:
            out += _finder_paths(os.path.join(site, name))
    return [p for p in dict.fromkeys(out) if os.path.isabs(p) and os.path.exists(p)]


def _read(path: str, limit: int) -> str:
    try:
        with open(path, "rb") as fh:
            return fh.read(limit).decode("utf-8", errors="replace")
    except OSError:
        return ""


def _pth_lines(site: str, name: str) -> list[str]:
    """The paths a `.pth` file names as `site` reads them (lines starting with `import` run code: not paths)."""
    lines = _read(os.path.join(site, name), _PTH_BYTES).splitlines()
    if name.endswith(".egg-link"):
        lines = lines[:1]
    return [os.path.normpath(os.path.join(site, line.strip())) for line in lines
            if line.strip() and not line.startswith(("#", "import ", "import\t"))]


def _finder_paths(path: str) -> list[str]:
    """The package folders an editable install's finder maps names to (its `MAPPING = {...}` literal)."""
    match = _MAPPING.search(_read(path, _FINDER_BYTES))
    if match is None:
        return []
    try:
        mapping = ast.literal_eval(match.group(1))
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    return [v for v in mapping.values() if isinstance(v, str)] if isinstance(mapping, dict) else []

"""The real suite's projects as they ship: each release's source distribution fetched through pip into a cache, and a
test venv for it outside the workspace, as a user's would be.

    cache = suite_cache()                                   # ~/.cache/cli-agent-suite (or CLI_AGENT_SUITE_CACHE)
    sdist = fetch(project, cache)                           # pip download --no-deps --no-binary :all: name==version
    root = unpack(sdist, into)                              # the sdist's top folder, unchanged
    base = project_venv(project, cache)                     # once per project: its test deps and pytest
    venv = task_venv(base, into / "venv", root / "src")     # per task: a copy of it that imports the workspace

The cache is not cli-agent's own cache folder: that one is hidden from the command sandbox, and the task's venv
must be visible there as a user's venv is. `pip_args` (e.g. `--no-index --find-links DIR`) go to every pip call,
so a test can serve a sdist it built from a local folder.

A task's venv is a copy of the project's venv (links kept, its scripts pointed at the copy) with one `.pth` file
naming the workspace's import root: what `pip install -e .` leaves, without a build, so tasks of one project can run
side by side, each importing its own workspace.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from collections.abc import Iterator
from pathlib import Path

import platformdirs

from cli_agent.contracts import dataclass, errors

PIP_TIMEOUT_S = 600
PTH = "_cli_agent_suite_workspace.pth"


@dataclass(frozen=True)
class Project:
    """A `[[project]]` of real.toml: a release on PyPI and how its tests are laid out."""

    name: str
    version: str
    layout: str  # "tests at the root", "tests inside the package", "tests/ with tox.ini", "src layout"
    import_root: str = "."  # where its package imports from, relative to the sdist's top folder
    tests: tuple[str, ...] = ()  # its test files or folders, put back as shipped before grading
    test_deps: tuple[str, ...] = ("pytest",)
    pip_args: tuple[str, ...] = ()  # extra pip options (a test serves a local sdist with --no-index --find-links)
    runner: str = "pytest"  # what grades its tasks' checks: "pytest", or "unittest" (a venv without pytest)

    @property
    def pin(self) -> str:
        return f"{self.name}=={self.version}"

    @property
    def key(self) -> str:
        return f"{self.name}-{self.version}"


def suite_cache() -> Path:
    """Where sdists and project venvs are kept: CLI_AGENT_SUITE_CACHE, else the user cache's cli-agent-suite."""
    override = os.environ.get("CLI_AGENT_SUITE_CACHE")
    if override:
        return Path(override)

    return Path(platformdirs.user_cache_dir("cli-agent-suite", appauthor=False))


def fetch(project: Project, cache: Path) -> Path:
    """The project's released sdist in `cache/sdists`, downloaded through pip the first time (one process at a
    time: suites on one machine share the cache)."""
    folder = cache / "sdists"
    found = _sdist_in(folder, project)
    if found is not None:
        return found
    with _locked(cache, project):
        return _fetched(project, folder)


def _fetched(project: Project, folder: Path) -> Path:
    found = _sdist_in(folder, project)
    if found is not None:
        return found
    folder.mkdir(parents=True, exist_ok=True)
    _pip(["download", "--no-deps", "--no-binary", ":all:", "-d", str(folder),
          *project.pip_args, project.pin], f"fetch the sdist of {project.pin}")
    found = _sdist_in(folder, project)
    if found is None:
        raise errors.UsageError(f"pip fetched no source distribution of {project.pin} into {folder}")
    return found


def cached_sdist(project: Project, cache: Path) -> Path | None:
    """The sdist when the cache holds it (nothing is fetched)."""
    return _sdist_in(cache / "sdists", project)


def _sdist_in(folder: Path, project: Project) -> Path | None:
    if not folder.is_dir():
        return None
    stems = {f"{n}-{project.version}" for n in (project.name, project.name.replace("-", "_"),
                                                 project.name.replace("_", "-"))}
    for path in sorted(folder.iterdir()):
        for stem in stems:
            if path.name.lower() in (f"{stem}.tar.gz".lower(), f"{stem}.zip".lower()):
                return path
    return None


def unpack(sdist: Path, into: Path) -> Path:
    """The sdist extracted under `into` (regular files and folders only); its one top folder."""
    into.mkdir(parents=True, exist_ok=True)
    try:
        if sdist.name.endswith(".zip"):
            with zipfile.ZipFile(sdist) as archive:
                _check_names(archive.namelist(), sdist)
                archive.extractall(into)
        else:
            with tarfile.open(sdist) as archive:
                archive.extractall(into, filter="data")
    except (OSError, tarfile.TarError, zipfile.BadZipFile) as exc:
        raise errors.UsageError(f"cannot unpack {sdist}: {exc}") from exc
    tops = [p for p in into.iterdir() if p.is_dir()]
    if len(tops) != 1:
        raise errors.UsageError(f"{sdist} does not hold one top folder")
    return tops[0]


def _check_names(names: list[str], sdist: Path) -> None:
    for name in names:
        if name.startswith("/") or ".." in Path(name).parts:
            raise errors.UsageError(f"{sdist} holds a path outside itself: {name}")


def project_venv(project: Project, cache: Path) -> Path:
    """The project's test venv in `cache/venvs`, made the first time: `python -m venv`, then its test deps and
    pytest through pip. A venv whose making failed is removed, so the next run makes it again."""
    with _locked(cache, project):
        return _made(project, cache / "venvs" / project.key)


def _made(project: Project, target: Path) -> Path:
    done = target / ".complete"
    wanted = " ".join(project.test_deps) + "\n"
    if done.is_file() and done.read_text(encoding="utf-8") == wanted:
        return target
    shutil.rmtree(target, ignore_errors=True)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        _run([sys.executable, "-m", "venv", "--without-pip", str(target)], f"make the venv {target}")
        if project.test_deps:
            _pip(["--python", str(venv_python(target)), "install", "--quiet", *project.pip_args,
                  *project.test_deps], f"install the test deps of {project.pin}")
        done.write_text(wanted, encoding="utf-8")
    except BaseException:
        shutil.rmtree(target, ignore_errors=True)
        raise
    return target


@contextlib.contextmanager
def _locked(cache: Path, project: Project) -> Iterator[None]:
    """The project's lock in the cache, held while its sdist is fetched or its venv made."""
    cache.mkdir(parents=True, exist_ok=True)
    with open(cache / f".{project.key}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def venv_python(venv: Path) -> Path:
    return venv / "bin" / "python"


def task_venv(base: Path, target: Path, import_root: Path) -> Path:
    """A copy of the project's venv at `target` whose Python imports `import_root` (the workspace's package root)
    after its own site-packages; its scripts run the copy's Python."""
    shutil.copytree(base, target, symlinks=True, ignore=shutil.ignore_patterns("__pycache__", ".complete"))
    old, new = f"#!{base}/bin/", f"#!{target}/bin/"
    for script in (target / "bin").iterdir():
        if script.is_symlink() or not script.is_file():
            continue
        head = script.read_bytes()[:len(old) + 1]
        if head.startswith(old.encode()):
            script.write_bytes(script.read_bytes().replace(old.encode(), new.encode(), 1))
    for site in (target / "lib").glob("python*/site-packages"):
        (site / PTH).write_text(f"{import_root}\n", encoding="utf-8")
    return target


def _pip(args: list[str], what: str) -> None:
    _run([sys.executable, "-m", "pip", "--disable-pip-version-check", *args], what)


def _run(argv: list[str], what: str) -> None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT_S,
                              env={**os.environ, "PIP_NO_INPUT": "1"})
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise errors.UsageError(f"cannot {what}: {exc}") from exc
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise errors.UsageError(f"cannot {what}: {last[:200]}")

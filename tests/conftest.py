"""Fixtures shared by the test files."""

from __future__ import annotations

import os
import platform
import pty
import shutil
import signal
import stat
import subprocess
import tempfile
import traceback
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# Hypothesis keeps its example database out of the working folder (it would write .hypothesis/ there).
os.environ.setdefault(
    "HYPOTHESIS_STORAGE_DIRECTORY", os.path.join(os.environ.get("TMPDIR", "/tmp"), "cli-agent-hypothesis")
)

# A suite started as a background job of a non-interactive shell (nohup, `cmd &`) inherits SIGINT ignored, and so
# would every child it starts: the Ctrl-C tests would then wait in vain. A handler of our own is reset to the default
# in each child at exec, so the children get Ctrl-C as a user's terminal would send it.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_configure(config: pytest.Config) -> None:
    """A pytest-xdist worker's temporary folders go under a short folder of their own (`/tmp/pt-gw0-…/`): xdist would
    put them one folder deeper than a one-process run's, and the terminal tests at 60 columns, whose screens show
    those paths, would then wrap them elsewhere."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if worker:
        config.option.basetemp = tempfile.mkdtemp(prefix=f"pt-{worker}-")

# A terminal test's terminal is the pseudo-terminal it opens, whatever size the runner's terminal has: pytest-xdist's
# workers set COLUMNS=80 and LINES=24, which a child would take over the size of its own terminal.
os.environ.pop("COLUMNS", None)
os.environ.pop("LINES", None)


# -- no test touches the real home ----------------------------------------------------------------------------------
# cli-agent keeps its config, state and cache under CLI_AGENT_HOME when it is set (cli_agent/fs/paths.py). The whole
# run gets one temporary home before any test module is imported (some build a registry at import, which writes the
# cache), every child process inherits it, and each test starts with it and without the caller's other CLI_AGENT_*
# settings. A test that wants a home of its own, empty, asks for `isolated_home`.

_RUN_HOME = Path(tempfile.mkdtemp(prefix="cli-agent-test-home-"))
_RUN_HOME.chmod(0o755)  # the unprivileged-sandbox test runs a child as nobody
os.environ["CLI_AGENT_HOME"] = str(_RUN_HOME)


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_RUN_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _not_the_real_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLI_AGENT_HOME", str(_RUN_HOME))
    for name in list(os.environ):
        if name.startswith("CLI_AGENT_") and name != "CLI_AGENT_HOME":
            monkeypatch.delenv(name)


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """cli-agent's config, state and cache under a temporary folder of this test's own, empty, as a CI run with no
    CLI_AGENT_* settings. Test files that run the CLI use it for every test with
    `pytestmark = pytest.mark.usefixtures(...)`."""
    home = tmp_path / "home"
    monkeypatch.setenv("CLI_AGENT_HOME", str(home))  # the other CLI_AGENT_* are gone already (_not_the_real_home)
    monkeypatch.setenv("CI", "true")
    return home


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    """An empty workspace folder (a test file that needs a prepared one defines its own `ws`)."""
    root = tmp_path / "ws"
    root.mkdir()
    return root


def _snapshot(root: Path) -> dict[str, object]:
    out: dict[str, object] = {}
    for folder, dirs, names in os.walk(root):
        for name in dirs + names:
            p = Path(folder, name)
            st = p.lstat()
            body = p.read_bytes() if stat.S_ISREG(st.st_mode) else os.readlink(p) if p.is_symlink() else None
            out[p.relative_to(root).as_posix()] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), body)
    return out


@pytest.fixture
def snapshot():
    """`snapshot(root)`: every entry below `root` by relative path, with its kind, permission bits, and bytes or
    link target, to show that nothing changed."""
    return _snapshot


# -- a test that starts a process is marked slow ---------------------------------------------------------------------
# Every way a test can start a process (subprocess and asyncio's subprocesses, pexpect and pty, os.fork, os.system)
# ends in one of these functions: each is wrapped to note the test running at the time, in its setup, call
# or teardown. A test that started one without the `slow` mark fails, naming the mark, so the quick loop
# (`pytest -m "not slow"`) stays free of them.

_running: list[pytest.Item] = []
_started = pytest.StashKey[str]()
_REPO = str(Path(__file__).resolve().parent.parent) + os.sep  # the tests' and the product's code (an editable install)
_PROBE = os.path.join("cli_agent", "sandbox", "probe.py")


def _noting(name: str, start: Callable[..., Any]) -> Callable[..., Any]:
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if _running and _started not in _running[-1].stash:
            ours = [f for f in traceback.extract_stack()[:-1] if f.filename.startswith(_REPO)]
            # The sandbox's probe (`bwrap --version` and a trial) is made once per interpreter, then remembered.
            if not ours or not ours[-1].filename.endswith(_PROBE):
                where = f" at {Path(ours[-1].filename).name}:{ours[-1].lineno}" if ours else ""
                _running[-1].stash[_started] = name + where
        return start(*args, **kwargs)

    return wrapped


def _watch_process_starts() -> None:
    # A start made once per interpreter, by whichever test comes first, would make the rule depend on the order:
    # the standard library's `uname -p` (asked by the OpenAI client's headers) is made now, before the watch.
    platform.processor()
    subprocess.Popen._execute_child = _noting("subprocess", subprocess.Popen._execute_child)  # type: ignore[attr-defined]
    for name in ("fork", "forkpty", "system", "posix_spawn", "posix_spawnp"):
        if hasattr(os, name):
            setattr(os, name, _noting(f"os.{name}", getattr(os, name)))
    pty.fork = _noting("pty.fork", pty.fork)


_watch_process_starts()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    _running.append(item)
    try:
        return (yield)
    finally:
        _running.pop()


@pytest.fixture(autouse=True)
def _processes_only_in_slow_tests(request: pytest.FixtureRequest) -> Iterator[None]:
    yield
    how = request.node.stash.get(_started, None)
    if how is not None and request.node.get_closest_marker("slow") is None:
        pytest.fail(f"this test starts a process ({how}) but is not marked slow: add @pytest.mark.slow "
                    "(the quick loop, `pytest -m \"not slow\"`, runs no process)", pytrace=False)

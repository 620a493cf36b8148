"""Fixtures shared by the test files."""

from __future__ import annotations

import os
import signal
import stat
from pathlib import Path

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


@pytest.fixture
def isolated_home(tmp_path, monkeypatch):
    """cli-agent's config, state and cache under a temporary folder, as a CI run with no CLI_AGENT_* settings.
    Test files that run the CLI use it for every test with `pytestmark = pytest.mark.usefixtures(...)`."""
    home = tmp_path / "home"
    monkeypatch.setenv("CLI_AGENT_HOME", str(home))
    monkeypatch.setenv("CI", "true")
    for name in list(os.environ):
        if name.startswith("CLI_AGENT_") and name != "CLI_AGENT_HOME":
            monkeypatch.delenv(name)
    return home


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

"""Links and files that ride along with the user's toolchain show nothing else: a version file in a monorepo's root
that links into HOME, a repository's `.venv` whose interpreter links to a Python-looking folder of HOME, an
allowlisted place of HOME linked elsewhere in HOME, and the credentials a toolchain shown whole keeps in itself
(a venv's `pip.conf`, a Node prefix's `etc/npmrc`, a conda env's `.condarc`). What a real sandboxed `cat` can read;
test_unprivileged.py runs this file again as nobody."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from sandboxkit import sandboxed

pytestmark = [pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only"),
              pytest.mark.slow]  # each starts the sandbox (a process), 0.1 s

HOME_SECRETS = (".bashrc", ".cache/app/token", "Documents/passwords.txt")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for rel in HOME_SECRETS:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET {rel}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    for name in ("VIRTUAL_ENV", "CONDA_PREFIX", "PYENV_ROOT", "NVM_DIR", "PYTHONPATH"):
        monkeypatch.delenv(name, raising=False)
    return home


def _cat(*paths: Path | str) -> str:
    return "cat " + " ".join(f"'{p}'" for p in paths) + " 2>&1; true"


def test_a_version_file_linked_into_home_shows_nothing_of_home(tmp_path: Path, home: Path) -> None:
    mono = tmp_path / "mono"
    ws = mono / "services" / "api"
    (ws / ".git").mkdir(parents=True)
    for name, rel in ((".python-version", ".bashrc"), (".nvmrc", ".cache/app/token"),
                      (".node-version", "Documents/passwords.txt")):
        (mono / name).symlink_to(home / rel)
    (mono / "services" / ".tool-versions").write_text("python 3.12.1\n")  # a real version file is shown
    (mono / "services" / "rust-toolchain").symlink_to(mono / "services" / ".tool-versions")  # to a version file
    run = sandboxed(ws, _cat(mono / ".python-version", mono / ".nvmrc", mono / ".node-version",
                             *(home / rel for rel in HOME_SECRETS), mono / "services" / ".tool-versions",
                             mono / "services" / "rust-toolchain"))
    out = run.outcome.output
    assert "SECRET" not in out, out
    assert out.count("python 3.12.1") == 2, out


def test_a_workspace_venv_whose_python_links_into_home_does_not_show_that_folder(tmp_path: Path, home: Path,
                                                                                 monkeypatch: pytest.MonkeyPatch
                                                                                 ) -> None:
    fake = home / "Documents" / "vault"  # looks like a Python prefix
    (fake / "lib" / "python3.99").mkdir(parents=True)
    (fake / "lib" / "python3.99" / "os.py").write_text("")
    (fake / "bin").mkdir()
    (fake / "bin" / "python3.99").write_text("")
    (fake / "passwords.txt").write_text("SECRET vault\n")
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".venv" / "bin").mkdir(parents=True)
    (ws / ".venv" / "pyvenv.cfg").write_text(f"home = {fake}/bin\nexecutable = {fake}/bin/python3.99\n")
    (ws / ".venv" / "bin" / "python3.99").symlink_to(fake / "bin" / "python3.99")
    monkeypatch.setenv("PATH", f"{ws}/.venv/bin:/usr/bin:/bin")
    monkeypatch.setenv("VIRTUAL_ENV", str(ws / ".venv"))
    run = sandboxed(ws, _cat(fake / "passwords.txt", fake / "lib" / "python3.99" / "os.py"))
    assert "SECRET" not in run.outcome.output and run.outcome.output.count("No such file") == 2, run.outcome.output


def test_an_allowlisted_place_linked_elsewhere_shows_only_what_is_allowed(tmp_path: Path, home: Path) -> None:
    (home / ".pyenv").mkdir()
    (home / ".pyenv" / "version").symlink_to(home / ".bashrc")
    (home / ".cache" / "pip").symlink_to(home / "Documents")
    scratch = tmp_path / "scratch" / "uv"  # a cache the user moved to another disk: still the cache
    scratch.mkdir(parents=True)
    (scratch / "ok.txt").write_text("tool uv cache\n")
    (home / ".cache" / "uv").symlink_to(scratch)
    (home / ".local" / "share" / "uv").mkdir(parents=True)
    (home / ".local" / "share" / "uv" / "python").symlink_to(home / ".pyenv")  # to another allowed place's parent
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    run = sandboxed(ws, _cat(home / ".pyenv" / "version", home / ".bashrc", home / ".cache" / "pip" / "passwords.txt",
                             home / "Documents" / "passwords.txt", home / ".cache" / "uv" / "ok.txt",
                             home / ".local" / "share" / "uv" / "python" / "version"))
    out = run.outcome.output
    assert "SECRET" not in out and "tool uv cache" in out, out


def _venv(prefix: Path) -> None:
    (prefix / "bin").mkdir(parents=True)
    (prefix / "pyvenv.cfg").write_text("include-system-site-packages = false\n")
    (prefix / "bin" / "tool").write_text("tool in a venv\n")


def test_the_credentials_a_toolchain_keeps_in_itself_are_masked(tmp_path: Path, home: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    venv, node, conda = tmp_path / "venvs" / "proj", tmp_path / "node", tmp_path / "conda" / "envs" / "data"
    _venv(venv)
    (venv / "pip.conf").write_text("[global]\nindex-url = https://user:SECRET@pypi.example/simple\n")
    for folder in (node / "bin", node / "lib" / "node_modules", node / "etc"):
        folder.mkdir(parents=True)
    (node / "bin" / "node").write_text("tool node\n")
    (node / "etc" / "npmrc").write_text("//registry.example/:_authToken=SECRET\n")
    for folder in (conda / "bin", conda / "conda-meta"):
        folder.mkdir(parents=True)
    (conda / "bin" / "tool").write_text("tool in a conda env\n")
    (conda / ".condarc").write_text("channels:\n  - https://conda.example/t/SECRET/channel\n")
    homed = (home / ".virtualenvs" / "old", home / ".conda" / "envs" / "base2")
    for prefix in homed:
        _venv(prefix)
        (prefix / "pip.conf").write_text("[global]\nindex-url = https://u:SECRET@x/simple\n")
        (prefix / ".condarc").write_text("channels: [https://conda.example/t/SECRET]\n")
    nvm_node = home / ".nvm" / "versions" / "node" / "v20.0.0"
    (nvm_node / "etc").mkdir(parents=True)
    (nvm_node / "etc" / "npmrc").write_text("_authToken=SECRET\n")
    monkeypatch.setenv("PATH", os.pathsep.join([f"{venv}/bin", f"{node}/bin", f"{conda}/bin", "/usr/bin", "/bin"]))
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    secrets = [venv / "pip.conf", node / "etc" / "npmrc", conda / ".condarc", nvm_node / "etc" / "npmrc",
               *(p / n for p in homed for n in ("pip.conf", ".condarc"))]
    run = sandboxed(ws, _cat(*secrets, venv / "bin" / "tool", node / "bin" / "node", conda / "bin" / "tool",
                             homed[0] / "bin" / "tool"))
    out = run.outcome.output
    assert "SECRET" not in out, out
    assert all(t in out for t in ("tool in a venv", "tool node", "tool in a conda env")), out

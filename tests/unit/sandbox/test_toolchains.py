"""The user's toolchain inside the command sandbox, and nothing else of HOME: an environment a folder on PATH belongs
to is shown whole (a venv made outside the workspace, with a package only it has, a conda-like prefix, a venv
reached through a link, node_modules/.bin), so a command sees the same `sys.path` as in the user's shell; HOME's tool
folders are shown by an allowlist, so no credential in a cache leaks, whatever its depth, name or age. Real venvs,
real commands in the real sandbox; test_unprivileged.py runs this file again as nobody."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sandboxkit import make_venv, run_policy, sandboxed

from cli_agent.config.settings import Settings
from cli_agent.sandbox import Policy
from cli_agent.sandbox.toolchains import toolchains

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")

SHOW_PATH = "import json, sys, onlyvenv; print(json.dumps([sys.prefix, onlyvenv.WHERE, sys.path]))"


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def venv(tmp_path: Path) -> Path:
    """A venv outside the workspace with a package only it has, and a `.pth` naming a source folder elsewhere
    (as an editable install does)."""
    elsewhere = tmp_path / "src-elsewhere"
    (elsewhere / "fromsource").mkdir(parents=True)
    (elsewhere / "fromsource" / "__init__.py").write_text("HERE = 'from a .pth folder'\n")
    make_venv(tmp_path / "venvs" / "proj", packages={"onlyvenv": "WHERE = 'the venv'\n"}, pth=(str(elsewhere),))
    return tmp_path / "venvs" / "proj"


def _on_path(monkeypatch: pytest.MonkeyPatch, prefix: Path, *, virtual_env: bool = True) -> None:
    monkeypatch.setenv("PATH", f"{prefix}/bin:/usr/local/bin:/usr/bin:/bin")
    if virtual_env:
        monkeypatch.setenv("VIRTUAL_ENV", str(prefix))
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.delenv("CONDA_PREFIX", raising=False)


def _in_the_shell(command: list[str], cwd: Path) -> str:
    """What the user's own shell gives (the same environment, no sandbox)."""
    return subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=True, timeout=60).stdout


# -- Python environments ---------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_a_venv_outside_the_workspace_is_shown_whole(ws: Path, venv: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _on_path(monkeypatch, venv)
    run = sandboxed(ws, f"python -c {SHOW_PATH!r} && python -c 'import fromsource; print(fromsource.HERE)'")
    assert run.outcome.exit_code == 0, run.outcome.output
    prefix, where, path = json.loads(run.outcome.output.splitlines()[0])
    assert prefix == str(venv) and where == "the venv"
    assert "from a .pth folder" in run.outcome.output
    host = json.loads(_in_the_shell([str(venv / "bin" / "python"), "-c", SHOW_PATH], ws).splitlines()[0])
    assert path == host[2]  # the same sys.path as in the user's shell


@pytest.mark.slow
def test_a_venv_reached_through_a_link_keeps_its_spelling(ws: Path, venv: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "links").mkdir()
    (tmp_path / "chain").mkdir()
    (tmp_path / "chain" / "step").symlink_to(venv)  # a link to a link: both are made again
    link = tmp_path / "links" / "current"
    link.symlink_to("../chain/step")
    _on_path(monkeypatch, link)
    run = sandboxed(ws, f"command -v python; python -c {SHOW_PATH!r}")
    assert run.outcome.exit_code == 0, run.outcome.output
    found, shown = run.outcome.output.splitlines()[:2]
    assert found == f"{link}/bin/python"
    assert json.loads(shown)[:2] == [str(link), "the venv"]


@pytest.mark.slow
def test_a_conda_like_prefix_and_conda_prefix_are_shown_whole(ws: Path, tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    def prefix(where: Path, data: str) -> Path:
        (where / "conda-meta").mkdir(parents=True)
        (where / "conda-meta" / "history").write_text("==> created <==\n")
        (where / "share").mkdir()
        (where / "share" / "data.txt").write_text(data)
        (where / "bin").mkdir()
        tool = where / "bin" / "condatool"
        tool.write_text('#!/bin/sh\ncat "$(dirname "$0")/../share/data.txt"\n')
        tool.chmod(0o755)
        return where

    env = prefix(tmp_path / "miniforge" / "envs" / "work", "from the env's share\n")
    other = prefix(tmp_path / "miniforge" / "envs" / "other", "from CONDA_PREFIX\n")
    monkeypatch.setenv("PATH", f"{env}/bin:/usr/bin:/bin")
    monkeypatch.setenv("CONDA_PREFIX", str(other))
    monkeypatch.delenv("VIRTUAL_ENV", raising=False)
    run = sandboxed(ws, 'condatool && cat "$CONDA_PREFIX/share/data.txt"')
    assert run.outcome.exit_code == 0, run.outcome.output
    assert "from the env's share" in run.outcome.output and "from CONDA_PREFIX" in run.outcome.output


@pytest.mark.slow
def test_node_modules_bin_outside_the_workspace_finds_its_packages(ws: Path, tmp_path: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    modules = tmp_path / "tools" / "node_modules"
    (modules / "lint" / "bin").mkdir(parents=True)
    (modules / "lint" / "bin" / "cli.sh").write_text('#!/bin/sh\necho "lint runs from its package"\n')
    (modules / "lint" / "bin" / "cli.sh").chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "lint").symlink_to("../lint/bin/cli.sh")
    monkeypatch.setenv("PATH", f"{modules}/.bin:/usr/bin:/bin")
    run = sandboxed(ws, "lint")
    assert run.outcome.exit_code == 0 and "lint runs from its package" in run.outcome.output, run.outcome.output


def test_a_venv_brings_the_interpreter_it_was_made_from(tmp_path: Path) -> None:
    base = tmp_path / "pythons" / "3.99"
    (base / "bin").mkdir(parents=True)
    (base / "lib" / "python3.99").mkdir(parents=True)
    (base / "lib" / "python3.99" / "os.py").write_text("")
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / "python").symlink_to(base / "bin" / "python3.99")
    (venv / "pyvenv.cfg").write_text(f"home = {base}/bin\ninclude-system-site-packages = false\n")
    chains = toolchains(f"{venv}/bin:{base}/bin:/usr/bin", {}, None)
    kinds = {(c.kind, c.where): c for c in chains}
    assert kinds[("venv", str(venv))].trees[:2] == (str(venv), str(base))
    assert ("python", str(base)) in kinds  # a pyenv version or uv Python on PATH is a prefix too


def test_node_cargo_rustup_go_and_pyenv_are_found_from_path_and_their_variables(tmp_path: Path) -> None:
    def tool(folder: Path, *names: str) -> Path:
        folder.mkdir(parents=True, exist_ok=True)
        for name in names:
            (folder / name).write_text("#!/bin/sh\n")
        return folder

    home = tmp_path / "home"
    nvm_node = tool(home / ".nvm" / "versions" / "node" / "v22.1.0" / "bin", "node", "npm")
    (nvm_node.parent / "lib" / "node_modules").mkdir(parents=True)
    cargo = tool(tmp_path / "cargo" / "bin", "cargo", "rustup")
    tool(tmp_path / "rustup" / "toolchains")
    goroot = tool(tmp_path / "go" / "bin", "go")
    (goroot.parent / "src" / "runtime").mkdir(parents=True)
    gopath_bin = tool(tmp_path / "gopath" / "bin", "gopls")
    shims = tool(home / ".pyenv" / "shims", "python")
    path = ":".join(str(p) for p in (nvm_node, cargo, goroot, gopath_bin, shims))
    env = {"RUSTUP_HOME": str(tmp_path / "rustup"), "GOPATH": str(tmp_path / "gopath"),
           "NVM_DIR": str(home / ".nvm")}
    found = {c.kind: c for c in toolchains(path, env, home)}
    assert found["node"].trees == (str(nvm_node.parent),)
    assert found["cargo"].trees == tuple(str(tmp_path / "cargo" / n) for n in ("bin", "registry", "git"))
    assert str(tmp_path / "rustup" / "toolchains") in found["rustup"].trees
    assert found["go"].trees == (str(goroot.parent),)
    assert found["go path"].trees == (str(gopath_bin), str(tmp_path / "gopath" / "pkg" / "mod"))
    assert str(home / ".pyenv" / "versions") in found["pyenv"].trees
    assert str(home / ".nvm" / "versions") in found["nvm"].trees


def test_an_environment_inside_the_workspace_takes_only_its_python_from_outside(
        ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A repository may hold a `.venv` whose files it wrote: its `.pth` lines and a `home` that is no Python never
    show a host folder."""
    from cli_agent.sandbox.layout import shown_trees

    base, private = tmp_path / "python", tmp_path / "private"
    (base / "lib" / "python3.99").mkdir(parents=True)
    (base / "lib" / "python3.99" / "os.py").write_text("")
    (private / "bin").mkdir(parents=True)
    site = ws / ".venv" / "lib" / "python3.99" / "site-packages"
    site.mkdir(parents=True)
    (ws / ".venv" / "bin").mkdir()
    (site / "evil.pth").write_text(f"{private}\n")
    for cfg, expected in ((f"home = {private}/bin\n", False), (f"home = {base}/bin\n", True)):
        (ws / ".venv" / "pyvenv.cfg").write_text(cfg)
        monkeypatch.setenv("PATH", f"{ws}/.venv/bin:/usr/bin:/bin")
        monkeypatch.setenv("VIRTUAL_ENV", str(ws / ".venv"))
        trees = shown_trees(Policy(workspace=ws)).trees
        assert not [t for t in trees if str(t).startswith(str(private))], trees
        assert (base in trees) is expected


# -- verification's pytest comes from the user's venv ---------------------------------------------------------------

@pytest.mark.slow
def test_verifications_pytest_comes_from_the_users_venv(tmp_path: Path) -> None:
    from clikit import calc_project
    from verifykit import DONE, READ, RIGHT, WRONG, run_json

    venv = tmp_path / "venvs" / "calc"
    make_venv(venv, packages={"onlyvenv": "WHERE = 'the venv'\n"},
              copy_dists=("pytest", "pluggy", "iniconfig", "packaging", "pygments"))
    ws, home = calc_project(tmp_path, 'test_command = "pytest -q -p no:cacheprovider"\n')
    (ws / "tests" / "test_calc.py").write_text(
        "import sys\n\nimport onlyvenv\nfrom calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        f"def test_runs_in_the_users_venv():\n    assert sys.prefix == {str(venv)!r}\n"
        "    assert onlyvenv.WHERE == 'the venv'\n")
    path = f"{venv}/bin:/usr/local/bin:/usr/bin:/bin"
    code, report, _trace = run_json(tmp_path, ws, home, [READ, WRONG, DONE, RIGHT, DONE],
                                    env_extra={"PATH": path, "VIRTUAL_ENV": str(venv)})
    assert code == 0, report
    assert report["verified"] is True and "2 passed" in report["tests"], report


# -- HOME: an allowlist of tool folders, no scan -----------------------------------------------------------------------

CACHE_SECRETS = (".cache/deep/a/b/c/d/e/f/token", ".cache/deeper/a/b/c/d/e/f/g/token", ".cache/app/accessToken",
                 ".cache/gemini/oauth_creds.json", ".cache/x/creds.json", ".cache/x/session.json",
                 ".cache/chromium/Default/Login Data", ".cache/chromium/Default/Cookies", ".local/lib/app/auth.json",
                 ".npm/_logs/token.txt", ".cargo/config.toml")
TOOL_FILES = (".cache/pip/http/ok.txt", ".cache/pre-commit/repo/ok.txt", ".cargo/registry/index/ok.txt",
              "go/pkg/mod/cache/ok.txt", ".cache/uv/ok.txt", ".npm/_cacache/ok.txt", ".m2/repository/ok.txt",
              ".local/lib/python3.11/site-packages/ok.txt", ".cache/huggingface/hub/ok.txt")


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    for rel in (*CACHE_SECRETS, *TOOL_FILES):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET {rel}\n" if rel in CACHE_SECRETS else f"tool {rel}\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    return home


@pytest.mark.slow
def test_homes_tool_folders_are_shown_by_name_and_nothing_else(ws: Path, home: Path) -> None:
    policy = Policy(workspace=ws)
    command = "cat " + " ".join(f"~/'{rel}'" for rel in (*CACHE_SECRETS, *TOOL_FILES)) + " 2>&1; ls -A ~/.cache"
    first = run_policy(ws, policy, command)
    (home / ".cache" / "newtool").mkdir()
    (home / ".cache" / "newtool" / "token").write_text("SECRET made between two commands\n")
    (home / ".cache" / "pip" / "late.txt").write_text("tool file made between two commands\n")
    second = run_policy(ws, policy, "cat ~/.cache/newtool/token ~/.cache/pip/late.txt 2>&1")  # the same session
    out = first.outcome.output + second.outcome.output
    assert "SECRET" not in out, out
    assert all(f"tool {rel}" in out for rel in TOOL_FILES), out
    assert "tool file made between two commands" in out
    listed = first.outcome.output.splitlines()[-5:]
    assert "deep" not in listed and "app" not in listed  # not named: absent, not masked


@pytest.mark.slow
def test_read_paths_show_more_of_home(ws: Path, home: Path) -> None:
    run = sandboxed(ws, "cat ~/.cache/app/accessToken", read_paths=("~/.cache/app",))
    assert "SECRET .cache/app/accessToken" in run.outcome.output  # the user named it


@pytest.mark.slow
def test_the_credential_files_of_home_are_masked_even_where_home_is_shown(ws: Path, home: Path) -> None:
    names = (".pgpass", ".s3cfg", ".vault-token", ".terraform.d/credentials.tfrc.json", ".kaggle/kaggle.json",
             ".databrickscfg", ".pulumi/credentials.json", ".fly/config.yml", ".boto", ".my.cnf", ".bash_history",
             ".zsh_history", ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json")
    for rel in names:
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET {rel}\n")
    (home / "notes.txt").write_text("plain notes\n")
    run = sandboxed(ws, "cat " + " ".join(f"~/{rel}" for rel in (*names, "notes.txt")) + " 2>/dev/null",
                    read_paths=(str(home),))
    assert "SECRET" not in run.outcome.output and "plain notes" in run.outcome.output, run.outcome.output


@pytest.mark.slow
def test_credential_files_at_the_workspace_root_are_masked(ws: Path) -> None:
    for rel in (".ssh/id_ed25519", ".aws/credentials", ".pgpass", "id_rsa"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(f"SECRET {rel}\n")
    (ws / "main.py").write_text("print('code')\n")
    run = sandboxed(ws, "cat .ssh/id_ed25519 .aws/credentials .pgpass id_rsa main.py 2>/dev/null")
    assert "SECRET" not in run.outcome.output and "print('code')" in run.outcome.output


# -- what `cli-agent sandbox` says ---------------------------------------------------------------------------------

@pytest.mark.slow  # the venv is made by a process
def test_cli_agent_sandbox_lists_the_environments_and_homes_tool_folders(ws: Path, venv: Path, home: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.ui.headless.sandbox_status import sandbox_report

    _on_path(monkeypatch, venv)
    text, code = sandbox_report(Settings(workspace=str(ws)))
    assert code == 0
    assert f"venv        {venv}" in text, text
    assert "~/.cache/pip (pip)" in text and "~/.cache/deep" not in text
    assert "[sandbox] read_paths" in text


def test_the_docs_list_homes_tool_folders_as_the_code_does() -> None:
    from places import REPO

    from cli_agent.sandbox.home_tools import HOME_TOOLS

    docs = (REPO / "docs" / "sandbox.md").read_text(encoding="utf-8")
    table = docs.split("<!-- home-tools:")[1].split("<!-- /home-tools -->")[0]
    rows = [line for line in table.splitlines() if line.startswith("| ") and not line.startswith("| tool ")]
    assert rows == [f"| {tool} | " + ", ".join(f"`~/{n}`" for n in names) + " |" for tool, names in HOME_TOOLS]

"""Adversarial protected paths: what the model may never change is found by what it is, not by how it is spelt:
`.cli-agent` and `.git` through links, a `.git` file's `gitdir:`, `--config FILE`, `CLI_AGENT_HOME` and the user
workflows folder inside the workspace. Each case through the real CLI (`tools run ... --yes`)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from cli_agent.cli.main import run

pytestmark = pytest.mark.usefixtures("isolated_home")


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "a.txt").write_text("a\n")
    return root


def write(ws: Path, path: str, *extra: str) -> tuple[int, str]:
    """`tools run write_file` with --yes: the exit code and the envelope's first error."""
    import contextlib
    import io

    out = io.StringIO()
    name = "write_file" if os.path.lexists(ws / path) else "create_file"
    with contextlib.redirect_stdout(out):
        code = run(["tools", "run", name, json.dumps({"path": path, "content": "pwned\n"}), "-C", str(ws),
                    "--yes", *extra])
    envelope = json.loads(out.getvalue())
    return code, (envelope["errors"] or [""])[0]


def refused(ws: Path, path: str, *extra: str) -> None:
    code, error = write(ws, path, *extra)
    assert code == 1 and "protected" in error, (path, code, error)


def test_a_linked_project_dir_is_protected_at_its_real_place(ws: Path) -> None:
    (ws / "settings").mkdir()
    (ws / "settings" / "config.toml").write_text("max_steps = 3\n")
    (ws / ".cli-agent").symlink_to("settings")
    for path in ("settings/config.toml", "settings/workflows/review.toml", ".cli-agent/config.toml",
                 "./settings/../settings/facts.toml", "SETTINGS/config.toml"):
        code, error = write(ws, path)
        assert code == 1 and ("protected" in error or "does not exist" in error), (path, error)
    assert (ws / "settings" / "config.toml").read_text() == "max_steps = 3\n"
    assert not (ws / "settings" / "workflows").exists()
    assert write(ws, "other.txt")[0] == 0  # the rest of the workspace is as writable as before


def test_a_linked_git_dir_and_a_gitdir_file_protect_their_targets(ws: Path) -> None:
    (ws / "vcs").mkdir()
    (ws / "vcs" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".git").write_text("gitdir: vcs\n")
    refused(ws, "vcs/HEAD")
    refused(ws, "vcs/hooks/pre-commit")
    (ws / ".git").unlink()
    (ws / ".git").symlink_to("vcs")
    refused(ws, "vcs/config")


@pytest.mark.slow
def test_a_real_separate_git_dir_and_a_worktree(ws: Path, tmp_path: Path) -> None:
    """What git itself makes: `git init --separate-git-dir` and `git worktree add`, both inside the workspace."""
    env = os.environ | {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", "init", "-q", "--separate-git-dir", str(ws / "store"), str(ws)], check=True, env=env)
    refused(ws, "store/hooks/post-checkout")
    refused(ws, "store/config")
    main = ws / "main"
    subprocess.run(["git", "init", "-q", str(main)], check=True, env=env)
    subprocess.run(["git", "-C", str(main), "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q",
                    "--allow-empty", "-m", "x"], check=True, env=env)
    subprocess.run(["git", "-C", str(main), "worktree", "add", "-q", str(main / "wt")], check=True, env=env)
    wt = main / "wt"
    gitdir = (wt / ".git").read_text().split(":", 1)[1].strip()
    rel = Path(gitdir).resolve().relative_to(wt.resolve().parent)  # .git/worktrees/wt
    assert write(wt, "file.txt")[0] == 0
    # the worktree as the workspace: its git dir (inside main/.git) is outside; the main checkout as the workspace:
    refused(main, f"{rel}/HEAD")
    refused(main, ".git/config")


def test_an_explicit_config_file_inside_the_workspace_is_protected(ws: Path) -> None:
    (ws / "agent.toml").write_text("max_steps = 5\n")
    refused(ws, "agent.toml", "--config", str(ws / "agent.toml"))
    (ws / "conf").mkdir()
    (ws / "conf" / "real.toml").write_text("")
    (ws / "alias.toml").symlink_to("conf/real.toml")
    refused(ws, "conf/real.toml", "--config", str(ws / "alias.toml"))  # the file, not the name it was given by
    assert (ws / "agent.toml").read_text() == "max_steps = 5\n"


def test_cli_agent_home_and_the_user_workflows_folder_inside_the_workspace(ws: Path,
                                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLI_AGENT_HOME", str(ws / "home"))
    (ws / "home").mkdir()
    refused(ws, "home/config/workflows/review.toml")  # would replace the built-in review
    refused(ws, "home/state/trusted-folders.json")  # would trust a folder
    refused(ws, "home/anything")
    assert not (ws / "home" / "config").exists()


def test_a_user_config_dir_inside_the_workspace_through_xdg(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLI_AGENT_HOME", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(ws / "xdg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(ws.parent / "state"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(ws.parent / "cache"))
    refused(ws, "xdg/cli-agent/workflows/explain.toml")
    assert write(ws, "xdg/other-app.toml")[0] == 0

"""One secret rule for the file tools and the command sandbox: a credential file (`fs.credentials`) is never
returned by read_file, search or list_files, wherever the workspace is: held at any depth (a copied home folder, a
dotfiles repository), reached through a link, or where the workspace lies in HOME, holds it, or lies in /etc."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.credentials import CREDENTIALS
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext, ToolLimits
from cli_agent.tools.handlers import files

# the credential files the sandbox's list lacked, and the usual ones, as a workspace may hold them
HELD = (".ssh/id_ed25519", ".aws/credentials", ".pgpass", ".s3cfg", ".vault-token",
        ".terraform.d/credentials.tfrc.json", ".kaggle/kaggle.json", ".databrickscfg", ".pulumi/credentials.json",
        ".fly/config.yml", ".boto", ".my.cnf", ".bash_history", ".zsh_history", ".claude/.credentials.json",
        ".codex/auth.json", ".gemini/oauth_creds.json", "backup/home/.ssh/id_rsa", "backup/home/.netrc",
        "deploy/keys/id_ed25519", ".config/gh/hosts.yml", "UPPER/.SSH/ID_RSA")


@pytest.fixture
def held(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for rel in HELD:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(f"SECRET-{rel}\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('SECRET-free code')\n")
    (root / ".ssh.md").write_text("notes on ssh\n")  # not a credential: a name that only starts alike
    (root / ".claude" / "settings.json").write_text("{}\n")  # not a credential: beside one
    (root / "link.txt").symlink_to(".aws/credentials")  # a link to one inside the workspace
    return root


def test_every_credential_file_held_by_the_workspace_is_refused_by_read_file(held: Path) -> None:
    ctx = ToolContext(Workspace(held))
    for rel in (*HELD, "link.txt", "./.aws/../.aws/credentials", str(held / ".pgpass")):
        with pytest.raises(ToolError) as info:
            files.read_file(ctx, rel)
        assert "credential" in info.value.message and "SECRET" not in info.value.message, rel
    assert "SECRET-free" in files.read_file(ctx, "src/app.py")["content"]
    assert files.read_file(ctx, ".ssh.md")["content"] == "notes on ssh\n"


def test_list_files_never_lists_them_and_refuses_a_credential_folder(held: Path) -> None:
    ctx = ToolContext(Workspace(held))
    listed = files.list_files(ctx, ".")["entries"]
    shown = {e.rstrip("/") for e in listed}
    assert not shown & {".ssh", ".aws", ".pgpass", ".vault-token", ".codex/auth.json", "backup/home/.ssh",
                        "deploy/keys/id_ed25519", ".gemini/oauth_creds.json", "UPPER/.SSH",
                        ".config/gh/hosts.yml"}, shown
    assert {"src/app.py", ".ssh.md", ".claude/settings.json", "link.txt", "backup/home"} <= shown
    for folder in (".ssh", "backup/home/.ssh", ".aws"):
        with pytest.raises(ToolError, match="credential folder"):
            files.list_files(ctx, folder)
    assert files.list_files(ctx, ".", pattern="**/id_*")["entries"] == []


@pytest.mark.slow  # ripgrep is a process
@pytest.mark.parametrize("engine", ["auto", "python"])
def test_search_never_returns_nor_counts_them(held: Path, engine: str) -> None:
    ctx = ToolContext(Workspace(held), ToolLimits(search_engine=engine))
    for mode in ("content", "files", "count"):
        found = files.search(ctx, "SECRET", output_mode=mode)
        assert found["total"] == 1 and found["files_with_matches"] == 1, found
        assert "SECRET-." not in str(found) and "id_" not in str(found)
    assert files.search(ctx, "SECRET", glob="*credentials*")["total"] == 0
    for scope in (".ssh", ".aws/credentials", "backup/home/.ssh"):
        with pytest.raises(ToolError, match="credential"):
            files.search(ctx, "SECRET", path=scope)


def test_a_workspace_inside_home_refuses_what_lies_in_homes_credential_places(tmp_path: Path,
                                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    for rel in (".aws/credentials", ".aws/config", "proj/main.py", ".config/app/token", ".config/nvim/init.lua"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET-{rel}\n")
    monkeypatch.setenv("HOME", str(home))
    aws = ToolContext(Workspace(home / ".aws"))  # a workspace inside a credential folder: nothing in it is read
    for rel in ("credentials", "config"):
        with pytest.raises(ToolError, match="credential"):
            files.read_file(aws, rel)
    assert files.list_files(aws, ".")["entries"] == []
    # a workspace inside ~/.config (private as a whole, not a credential) is the user's choice, as in the sandbox
    assert "init.lua" in files.read_file(ToolContext(Workspace(home / ".config" / "nvim")), "init.lua")["path"]
    assert files.read_file(ToolContext(Workspace(home / "proj")), "main.py")["content"]


def test_a_workspace_holding_home_refuses_homes_private_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    home = tmp_path / "users" / "me"
    for rel in (".config/app/token", ".npmrc", ".mozilla/profile/cookies.sqlite", "notes.txt"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(f"SECRET-{rel}\n")
    monkeypatch.setenv("HOME", str(home))
    ctx = ToolContext(Workspace(tmp_path / "users"))
    for rel in ("me/.config/app/token", "me/.npmrc", "me/.mozilla/profile/cookies.sqlite"):
        with pytest.raises(ToolError, match="credential"):
            files.read_file(ctx, rel)
    assert {e.rstrip("/") for e in files.list_files(ctx, ".")["entries"]} == {"me", "me/notes.txt"}


@pytest.mark.skipif(not os.path.exists("/etc/shadow"), reason="no /etc/shadow here")
def test_a_workspace_in_etc_refuses_its_secrets() -> None:
    ctx = ToolContext(Workspace("/etc"))
    with pytest.raises(ToolError, match="credential"):
        files.read_file(ctx, "shadow")
    assert "shadow" not in files.list_files(ctx, ".", depth=1)["entries"]


def test_the_list_names_the_credential_files_it_promises() -> None:
    for name in (".pgpass", ".s3cfg", ".vault-token", ".terraform.d/credentials.tfrc.json", ".kaggle/kaggle.json",
                 ".databrickscfg", ".pulumi/credentials.json", ".fly/config.yml", ".boto", ".my.cnf",
                 ".bash_history", ".zsh_history", ".claude/.credentials.json", ".codex/auth.json",
                 ".gemini/oauth_creds.json"):
        assert name in CREDENTIALS


def test_cli_agents_own_config_state_and_cache_are_never_returned(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    agent_home = tmp_path / "ws" / "agent-home"
    for rel in ("config/config.toml", "state/traces/t.jsonl", "cache/x.json"):
        (agent_home / rel).parent.mkdir(parents=True, exist_ok=True)
        (agent_home / rel).write_text('api_key = "SECRET"\n')
    (tmp_path / "ws" / "main.py").write_text("print(1)\n")
    monkeypatch.setenv("CLI_AGENT_HOME", str(agent_home))  # the command sandbox hides these folders too
    ctx = ToolContext(Workspace(tmp_path / "ws"))
    for rel in ("agent-home/config/config.toml", "agent-home/state/traces/t.jsonl", "agent-home/cache/x.json"):
        with pytest.raises(ToolError, match="cli-agent's own"):
            files.read_file(ctx, rel)
    assert {e.rstrip("/") for e in files.list_files(ctx, ".")["entries"]} == {"agent-home", "main.py"}

"""The root, HOME (the environment's and the account's) and any folder above HOME are no workspace; a project
inside HOME is."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_agent.contracts.errors import UsageError
from cli_agent.fs.broad import broad_reason, refuse_broad


def test_root_home_and_above_are_refused_and_a_project_is_not(tmp_path: Path, monkeypatch) -> None:
    home = tmp_path / "users" / "me"
    (home / "project").mkdir(parents=True)
    (tmp_path / "link-to-home").symlink_to(home)
    monkeypatch.setenv("HOME", str(home))
    assert broad_reason("/") == "the filesystem's root"
    assert broad_reason(home) == "your home folder"
    assert broad_reason(tmp_path / "link-to-home") == "your home folder"
    assert str(broad_reason(home.parent)).startswith("a folder that holds your home folder")
    assert str(broad_reason(tmp_path)).startswith("a folder that holds your home folder")
    assert broad_reason(home / "project") is None
    with pytest.raises(UsageError) as caught:
        refuse_broad(home)
    assert caught.value.exit_code == 2 and "open a project folder" in str(caught.value)


def test_the_account_s_own_home_counts_when_home_points_elsewhere(tmp_path: Path, monkeypatch) -> None:
    import os
    import pwd

    monkeypatch.setenv("HOME", str(tmp_path))
    account = pwd.getpwuid(os.getuid()).pw_dir
    assert broad_reason(account) is not None

"""The folders that are never a workspace: the filesystem's root, your home folder, and any folder that holds your
home. Opening one would put every secret you have (keys, cloud credentials, shell history) in the file tools'
reach; a project folder is what cli-agent works in.

    refuse_broad(Path("/"))      # UsageError: "/ is the filesystem's root: open a project folder ..."

HOME is the environment's (what `~` means to the user) and also the account's own home from the password
database, so that a changed HOME does not hide the real one.
"""

from __future__ import annotations

import os
import pwd
from pathlib import Path

from cli_agent.contracts import UsageError

__all__ = ["broad_reason", "refuse_broad"]


def _homes() -> set[Path]:
    homes = set()
    for home in (os.environ.get("HOME"), _account_home()):
        if home and os.path.isabs(home):
            homes.add(Path(os.path.realpath(home)))
    return homes


def _account_home() -> str | None:
    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except (KeyError, OSError):
        return None


def broad_reason(root: str | os.PathLike[str]) -> str | None:
    """Why `root` can't be a workspace ("your home folder", ...), or None when it can."""
    real = Path(os.path.realpath(root))
    if real == Path(real.anchor):
        return "the filesystem's root"
    for home in _homes():
        if real == home:
            return "your home folder"
        if real in home.parents:
            return f"a folder that holds your home folder ({home})"
    return None


def refuse_broad(root: str | os.PathLike[str]) -> None:
    """UsageError (exit 2) when `root` is the root, HOME or a folder above HOME; one line saying what to open."""
    reason = broad_reason(root)
    if reason is not None:
        raise UsageError(f"{os.fspath(root)} is {reason}, not a project: open a project folder instead "
                         "(cd into it, or -C DIR); the whole of it would be in the tools' reach")

"""Where cli-agent keeps its files outside the workspace: the platform's user dirs, through platformdirs.

Functions, not constants: nothing is computed or created at import. Tests point these elsewhere with the
XDG_* variables (Linux) or CLI_AGENT_HOME, which puts config, state and cache under one folder.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

__all__ = ["PROJECT_DIR"]

APP = "cli-agent"
PROJECT_DIR = ".cli-agent"


def _home_override(kind: str) -> Path | None:
    home = os.environ.get("CLI_AGENT_HOME")
    return Path(home) / kind if home else None


def user_config_dir() -> Path:
    return _home_override("config") or Path(platformdirs.user_config_dir(APP, appauthor=False))


def user_state_dir() -> Path:
    return _home_override("state") or Path(platformdirs.user_state_dir(APP, appauthor=False))


def user_cache_dir() -> Path:
    return _home_override("cache") or Path(platformdirs.user_cache_dir(APP, appauthor=False))


def user_config_file() -> Path:
    return user_config_dir() / "config.toml"


def project_config_file(workspace: Path) -> Path:
    return workspace / PROJECT_DIR / "config.toml"

"""Fixtures shared by the test files."""

from __future__ import annotations

import os

import pytest


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

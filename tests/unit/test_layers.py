"""The layers contract (`.importlinter`): the tree keeps it, and an upward import breaks it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from places import REPO

pytestmark = pytest.mark.slow  # each check starts lint-imports

LINT = Path(sys.executable).with_name("lint-imports")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(root))
    return subprocess.run([str(LINT), "--no-cache", "--config", str(REPO / ".importlinter")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "cli_agent", tmp_path / "cli_agent",
                    ignore=shutil.ignore_patterns("__pycache__", "real_projects", "*.gguf"))
    return tmp_path


def test_the_tree_keeps_the_layers_contract(tmp_path):
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("low", "high"), [("contracts", "cli_agent.cli.main"), ("agent", "cli_agent.session.session"),
                                           ("fs", "cli_agent.config.settings")])
def test_an_upward_import_breaks_the_contract(tmp_path, low, high):
    root = _copy(tmp_path)
    (root / "cli_agent" / low / "planted.py").write_text(f"def late():\n    import {high}  # noqa: F401\n")
    result = _lint(root)
    assert result.returncode != 0
    assert f"cli_agent.{low} is not allowed to import cli_agent.{high.split('.')[1]}" in result.stdout


def test_every_package_has_a_layer():
    text = (REPO / ".importlinter").read_text(encoding="utf-8")
    layers = text.split("layers =", 1)[1].split("containers", 1)[0]
    named = {name.strip() for line in layers.splitlines() for name in line.split("|") if name.strip()}
    packages = {p.parent.name for p in (REPO / "cli_agent").glob("*/__init__.py")}
    assert packages == named


def _walled() -> list[str]:
    """The packages with a wall: each top-level package of cli_agent, and inside ui/ and serve/ each subpackage."""
    text = (REPO / ".importlinter").read_text(encoding="utf-8")
    return sorted(line.split("cli_agent.", 1)[1].split(" ", 1)[0] for line in text.splitlines()
                  if line.startswith("name = Walls: cli_agent."))


def test_every_package_has_a_wall_and_names_its_exports():
    packages = {p.parent.name for p in (REPO / "cli_agent").glob("*/__init__.py")}
    walled = _walled()
    assert {w.split(".")[0] for w in walled} == packages
    for unit in walled:
        init = REPO / "cli_agent" / Path(*unit.split(".")) / "__init__.py"
        assert "__all__" in init.read_text(encoding="utf-8"), f"cli_agent/{unit}/__init__.py names no exports"


@pytest.mark.parametrize("unit", ["agent", "config", "contracts", "fs", "history", "mcp", "prompt", "providers",
                                  "sandbox", "session", "tools", "ui.view", "validated", "workflows"])
def test_every_export_of_a_package_is_there(unit):
    """Each name a package's `__all__` gives resolves (a lazy export loads its module when first asked for)."""
    import importlib
    import importlib.util

    module = importlib.import_module(f"cli_agent.{unit}")
    missing = [name for name in module.__all__ if getattr(module, name, None) is None
               and importlib.util.find_spec(f"cli_agent.{unit}.{name}") is None]  # a submodule it offers
    assert missing == []


@pytest.mark.parametrize(("outside", "inside"), [("cli", "cli_agent.sandbox.layout"),
                                                 ("session", "cli_agent.tools.handlers.files"),
                                                 ("agent", "cli_agent.providers.openai_http")])
def test_a_packages_insides_imported_from_outside_break_its_wall(tmp_path, outside, inside):
    root = _copy(tmp_path)
    (root / "cli_agent" / outside / "planted.py").write_text(f"def late():\n    import {inside}  # noqa: F401\n")
    result = _lint(root)
    assert result.returncode != 0
    package = inside.split(".")[1]
    assert f"Walls: cli_agent.{package} is imported from outside only through its __init__ BROKEN" in result.stdout
    assert f"cli_agent.{outside}.planted -> {inside}" in result.stdout, result.stdout[-2000:]

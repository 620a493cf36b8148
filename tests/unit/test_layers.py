"""The contracts of `.importlinter`: the tree keeps the layers and the walls, an upward import breaks the layers, and
an import of a package's insides from outside it, a new package's included, breaks the walls."""

from __future__ import annotations

import ast
import configparser
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
    env = dict(os.environ, PYTHONPATH=str(root), COLUMNS="200")  # a contract's name and its verdict on one line
    return subprocess.run([str(LINT), "--no-cache", "--config", str(REPO / ".importlinter")], cwd=root, env=env,
                          capture_output=True, text=True, timeout=120)


def _copy(tmp_path: Path) -> Path:
    shutil.copytree(REPO / "cli_agent", tmp_path / "cli_agent",
                    ignore=shutil.ignore_patterns("__pycache__", "real_projects", "*.gguf"))
    return tmp_path


def _plant(module: Path, imported: str) -> None:
    module.write_text(f"def late():\n    import {imported}  # noqa: F401\n")


def test_the_tree_keeps_its_contracts(tmp_path):
    result = _lint(_copy(tmp_path))
    assert result.returncode == 0, result.stdout[-3000:]
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(("low", "high"), [("contracts", "cli_agent.cli.main"), ("agent", "cli_agent.session.session"),
                                           ("fs", "cli_agent.config.settings")])
def test_an_upward_import_breaks_the_contract(tmp_path, low, high):
    root = _copy(tmp_path)
    _plant(root / "cli_agent" / low / "planted.py", high)
    result = _lint(root)
    assert result.returncode != 0
    assert f"cli_agent.{low} is not allowed to import cli_agent.{high.split('.')[1]}" in result.stdout


def test_every_package_has_a_layer():
    text = (REPO / ".importlinter").read_text(encoding="utf-8")
    layers = text.split("layers =", 1)[1].split("containers", 1)[0]
    named = {name.strip() for line in layers.splitlines() for name in line.split("|") if name.strip()}
    packages = {p.parent.name for p in (REPO / "cli_agent").glob("*/__init__.py")}
    assert packages == named


def _walls() -> configparser.SectionProxy:
    config = configparser.ConfigParser()
    config.read(REPO / ".importlinter", encoding="utf-8")
    return config["importlinter:contract:walls"]


def _listed(key: str) -> set[str]:
    return {line.strip() for line in _walls()[key].splitlines() if line.strip()}


def _declared_all(init: Path) -> list[str] | None:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and node.value is not None:
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                return [str(name) for name in ast.literal_eval(node.value)]
    return None


def _units() -> tuple[list[Path], list[Path]]:
    """The walled packages: each top-level package of cli_agent, and each subpackage of those whose subpackages the
    walls name as sources (`cli_agent.ui.*`): those subpackages are faces of their own."""
    holders = [s.removeprefix("cli_agent.").removesuffix(".*") for s in _listed("source_modules") - {"cli_agent.*"}]
    tops = sorted(p.parent for p in (REPO / "cli_agent").glob("*/__init__.py"))
    subs = sorted(p.parent for holder in holders for p in (REPO / "cli_agent" / holder).glob("*/__init__.py"))
    return tops, subs


def test_one_wall_covers_every_package_and_each_names_its_exports():
    assert _listed("source_modules") >= {"cli_agent.*"}
    assert _listed("forbidden_modules") == {"cli_agent.*.*"}
    tops, subs = _units()
    for package in tops + subs:
        if any(package.glob("[!_]*.py")):  # a package of subpackages only (ui/) offers nothing itself
            assert _declared_all(package / "__init__.py") is not None, f"{package}/__init__.py names no exports"


def test_the_wall_lets_through_exactly_what_the_faces_offer_whole():
    """A name in a face's `__all__` that is one of its modules is imported as that module, and the subpackages of
    ui/ and serve/ are faces: those, and the entry point, are the wall's only exceptions."""
    tops, subs = _units()
    dotted = [".".join(p.relative_to(REPO).parts) for p in tops + subs]
    whole = {f"{unit}.{name}" for package, unit in zip(tops + subs, dotted, strict=True)
             for name in _declared_all(package / "__init__.py") or []
             if (package / f"{name}.py").exists() or (package / name / "__init__.py").exists()}
    faces = {".".join(p.relative_to(REPO).parts) for p in subs}
    expected = {f"cli_agent.** -> {module}" for module in whole | faces} | {"cli_agent.__main__ -> cli_agent.cli.entry"}
    assert _listed("ignore_imports") == expected


@pytest.mark.parametrize(("outside", "inside"), [("cli", "cli_agent.sandbox.layout"),
                                                 ("session", "cli_agent.tools.handlers.files"),
                                                 ("agent", "cli_agent.providers.openai_http"),
                                                 ("cli", "cli_agent.serve.mcp"),
                                                 ("ui.headless", "cli_agent.ui.view.approve")])
def test_a_packages_insides_imported_from_outside_break_its_wall(tmp_path, outside, inside):
    root = _copy(tmp_path)
    _plant(root / "cli_agent" / Path(*outside.split(".")) / "planted.py", inside)
    result = _lint(root)
    assert result.returncode != 0
    assert f"{_walls()['name']} BROKEN" in result.stdout, result.stdout[-2000:]
    assert f"cli_agent.{outside}.planted -> {inside}" in result.stdout, result.stdout[-2000:]


def test_a_new_package_is_walled_from_its_first_commit(tmp_path):
    """A package no contract names yet may not reach into another's insides, nor another into its own."""
    root = _copy(tmp_path)
    (root / "cli_agent" / "newpkg").mkdir()
    (root / "cli_agent" / "newpkg" / "__init__.py").write_text("__all__: list[str] = []\n")
    _plant(root / "cli_agent" / "newpkg" / "reach.py", "cli_agent.sandbox.layout")
    _plant(root / "cli_agent" / "agent" / "planted.py", "cli_agent.newpkg.reach")
    result = _lint(root)
    assert result.returncode != 0
    assert f"{_walls()['name']} BROKEN" in result.stdout, result.stdout[-2000:]
    assert "cli_agent.newpkg.reach -> cli_agent.sandbox.layout" in result.stdout, result.stdout[-2000:]
    assert "cli_agent.agent.planted -> cli_agent.newpkg.reach" in result.stdout, result.stdout[-2000:]

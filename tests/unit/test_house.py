"""The house's rules, held by a test: no module over 400 lines (the loop, the core, 300 or fewer), no package with
more than 15 modules at its top level, and every package's `__init__` saying what it holds and what it may import."""

from __future__ import annotations

import ast
from pathlib import Path

from places import REPO

PACKAGE = REPO / "cli_agent"


def _modules() -> list[Path]:
    return list(PACKAGE.rglob("*.py"))


def test_no_module_is_over_400_lines_and_the_loop_over_300():
    sizes = {p.relative_to(PACKAGE).as_posix(): len(p.read_text(encoding="utf-8").splitlines()) for p in _modules()}
    assert {name: n for name, n in sizes.items() if n > 400} == {}
    assert sizes["agent/loop.py"] <= 300


def test_no_package_holds_more_than_15_modules_at_its_top_level():
    folders = {p.parent for p in _modules()}
    counts = {f.relative_to(PACKAGE).as_posix(): len([p for p in f.glob("*.py") if p.name != "__init__.py"])
              for f in folders}
    assert {name: n for name, n in counts.items() if n > 15} == {}


def test_every_package_says_what_it_holds_and_what_it_may_import():
    for init in PACKAGE.glob("*/__init__.py"):
        doc = ast.get_docstring(ast.parse(init.read_text(encoding="utf-8"))) or ""
        assert "import" in doc, f"{init.relative_to(PACKAGE)}: its docstring says nothing of what it may import"

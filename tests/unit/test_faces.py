"""The packages' faces: each `__init__` gathers its modules' `__all__` (`from .module import *`) and names the same
names in its own `__all__`; a module that declares an `__all__` is one the face offers; every export resolves to the
object its module defines; docs/architecture.md's list of what each package offers is this test's own rendering.

`python tests/unit/test_faces.py` writes that list into docs/architecture.md after a face changes.
"""

from __future__ import annotations

import ast
import importlib
import sys
import textwrap
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from places import REPO

PACKAGE = REPO / "cli_agent"
DOC = REPO / "docs" / "architecture.md"
BEGIN, END = "<!-- faces: begin (tests/unit/test_faces.py) -->", "<!-- faces: end -->"


def units() -> list[str]:
    """The walled packages: each top-level package of cli_agent, and each subpackage of ui/ and serve/."""
    tops = sorted(p.parent.name for p in PACKAGE.glob("*/__init__.py"))
    subs = sorted(f"{top}.{p.parent.name}" for top in ("ui", "serve") for p in (PACKAGE / top).glob("*/__init__.py"))
    return tops + subs


def unit_of(module: Path) -> str:
    parts = module.relative_to(PACKAGE).parts
    if parts[0] in ("ui", "serve") and len(parts) > 2:
        return f"{parts[0]}.{parts[1]}"
    return parts[0]


def _declared_all(tree: ast.Module) -> list[str] | None:
    for node in tree.body:
        target: ast.expr
        value: ast.expr | None
        if isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        elif isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "__all__" and value is not None:
            names = ast.literal_eval(value)
            assert isinstance(names, list)
            return [str(name) for name in names]
    return None


def face_parts(unit: str) -> tuple[list[str], list[str], list[str]]:
    """A face as written: the modules it gathers with `import *`, the modules it offers whole, its `__all__`."""
    init = PACKAGE / Path(*unit.split(".")) / "__init__.py"
    tree = ast.parse(init.read_text(encoding="utf-8"))
    starred = [n.module or "" for n in tree.body if isinstance(n, ast.ImportFrom) and n.names[0].name == "*"]
    whole = [f"cli_agent.{unit}.{a.name}" for n in tree.body if isinstance(n, ast.ImportFrom)
             and n.module == f"cli_agent.{unit}" for a in n.names]
    return starred, whole, _declared_all(tree) or []


@pytest.mark.parametrize("unit", units())
def test_a_face_is_the_union_of_what_its_modules_declare(unit):
    face = importlib.import_module(f"cli_agent.{unit}")
    starred, whole, declared = face_parts(unit)
    gathered: dict[str, str] = {}
    for name in starred:
        for export in importlib.import_module(name).__all__:
            assert export not in gathered, f"{export} is declared by both {gathered[export]} and {name}"
            gathered[export] = name
    expected = sorted([*gathered, *(m.rsplit(".", 1)[1] for m in whole)])
    assert sorted(declared) == expected, f"cli_agent/{unit}/__init__.py's __all__ differs from its modules'"
    for export, module in gathered.items():
        assert getattr(face, export) is getattr(importlib.import_module(module), export)


def test_a_module_that_declares_exports_is_gathered_by_its_face():
    offered = {unit: set(face_parts(unit)[0]) | set(face_parts(unit)[1]) for unit in units()}
    stray = []
    for path in PACKAGE.rglob("*.py"):
        if len(path.relative_to(PACKAGE).parts) == 1 or (path.name == "__init__.py" and
                                                          ".".join(path.parent.relative_to(PACKAGE).parts) in offered):
            continue
        name = ".".join(path.with_suffix("").relative_to(REPO).parts).removesuffix(".__init__")
        if _declared_all(ast.parse(path.read_text(encoding="utf-8"))) and name not in offered[unit_of(path)]:
            stray.append(name)
    assert stray == [], "these modules declare an __all__ that no face gathers (drop it, or gather the module)"


def rendered() -> str:
    """What each package offers, as docs/architecture.md lists it."""
    lines = []
    for unit in units():
        declared = face_parts(unit)[2]
        text = ", ".join(sorted(declared)) if declared else "(nothing)"
        wrapped = textwrap.wrap(text, 120 - 14, break_on_hyphens=False) or [""]
        lines.append(f"{unit + '/':<14}{wrapped[0]}")
        lines.extend(" " * 14 + more for more in wrapped[1:])
    return "\n".join(lines)


def test_the_architecture_page_lists_each_face():
    text = DOC.read_text(encoding="utf-8")
    listed = text.split(BEGIN, 1)[1].split(END, 1)[0].strip().removeprefix("```").removesuffix("```").strip("\n")
    assert listed == rendered(), "docs/architecture.md is out of date: run python tests/unit/test_faces.py"


if __name__ == "__main__":
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(BEGIN, 1)
    DOC.write_text(f"{head}{BEGIN}\n```\n{rendered()}\n```\n{END}{rest.split(END, 1)[1]}", encoding="utf-8")

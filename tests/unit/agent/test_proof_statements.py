"""What a task states about names: the imports that must work, the names it adds, renames and removes; found in
the task's text, then checked by a program run with the workspace's modules (here with this interpreter)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cli_agent.agent.judge.proof.statements import Statement, script, statements, verdicts
from cli_agent.agent.judge.task_examples import modules


@pytest.fixture
def toolz(tmp_path: Path) -> Path:
    (tmp_path / "toolz").mkdir()
    (tmp_path / "toolz" / "__init__.py").write_text("from .dicttoolz import *\n")
    (tmp_path / "toolz" / "dicttoolz.py").write_text("def keyfilter(f, d):\n    return {k: v for k, v in d.items() "
                                                    "if f(k)}\n\n\ndef soft_str(x):\n    return str(x)\n")
    return tmp_path


def test_imports_added_renamed_and_removed_names_are_found(toolz: Path) -> None:
    task = ("Add a function select_keys(keys, d) to toolz/dicttoolz.py; `from toolz import select_keys` works. "
            "Rename `soft_str` to `soft_text`. Do not keep the old name. Remove the function `keyfilter`.")
    assert statements(task, toolz) == (
        Statement("import", "from toolz import select_keys"), Statement("exists", "select_keys"),
        Statement("renamed", "soft_str soft_text"), Statement("gone", "soft_str"), Statement("gone", "keyfilter"))


def test_a_rename_is_two_statements_the_new_name_defined_and_the_old_one_gone(toolz: Path) -> None:
    assert statements("Rename soft_str to soft_text", toolz) == (
        Statement("renamed", "soft_str soft_text"), Statement("gone", "soft_str"))


def test_what_is_not_a_statement_is_left_alone(toolz: Path) -> None:
    assert statements("`from numpy import array` works", toolz) == ()  # not the workspace's module
    assert statements("`from toolz import old` should fail now", toolz) == ()
    assert statements("Rename soft_str to soft_text, keep the old name as an alias", toolz) == (
        Statement("renamed", "soft_str soft_text"),)
    assert statements("Add `None` handling; add `n` to the index", toolz) == ()  # no kind of definition named
    assert statements("Add error handling to keyfilter.", toolz) == ()


def check(root: Path, found: tuple[Statement, ...], files: list[str]) -> list[tuple[bool | None, str]]:
    names, folders = modules(root, files)
    program = script(found, names, folders, [n for n in names if "." not in n])
    out = subprocess.run([sys.executable, "-c", program], cwd=root, capture_output=True, text=True, timeout=60)
    return [(v.ok, v.detail) for v in verdicts(found, out.stdout + out.stderr)]


@pytest.mark.slow
def test_the_statements_are_checked_against_the_modules_the_task_names(toolz: Path) -> None:
    found = statements("Add a function `select_keys(keys, d)`; `from toolz import select_keys` works. Rename "
                       "soft_str to soft_text, and do not keep the old name.", toolz)
    before = check(toolz, found, ["toolz/dicttoolz.py"])
    assert [ok for ok, _ in before] == [False, False, False, False]
    assert "cannot import name 'select_keys'" in before[0][1] and "still defined in toolz" in before[3][1]
    (toolz / "dicttoolz_test.py").write_text("def select_keys(k, d):\n    return d\n")  # beside: it never counts
    (toolz / "toolz" / "dicttoolz.py").write_text("def select_keys(keys, d):\n    return {k: d[k] for k in keys}\n\n\n"
                                                  "def soft_text(x):\n    return str(x)\n")
    assert [ok for ok, _ in check(toolz, found, ["toolz/dicttoolz.py"])] == [True, True, True, True]


@pytest.mark.slow
def test_a_method_counts_as_defined_and_a_module_that_does_not_import_fails_unless_a_package_is_missing(
        tmp_path: Path) -> None:
    (tmp_path / "ver.py").write_text("class Version:\n    def is_stable(self):\n        return True\n")
    found = (Statement("exists", "is_stable"), Statement("gone", "is_prerelease"))
    assert [ok for ok, _ in check(tmp_path, found, ["ver.py"])] == [True, True]
    (tmp_path / "ver.py").write_text("import no_such_package\n")
    assert [ok for ok, _ in check(tmp_path, found, ["ver.py"])] == [None, None]
    # the workspace's own module does not import (it imports what the task asks to add): that fails, not skips
    (tmp_path / "helpers.py").write_text("def other():\n    pass\n")
    (tmp_path / "ver.py").write_text("from helpers import is_stable\n")
    verdict = check(tmp_path, found, ["ver.py"])
    assert [ok for ok, _ in verdict] == [False, False] and "cannot import name 'is_stable'" in verdict[0][1]


@pytest.mark.slow
def test_a_rename_of_what_is_not_a_definition_is_not_judged(tmp_path: Path) -> None:
    (tmp_path / "seq.py").write_text("def take(xs, count):\n    return xs[:count]\n")
    renamed = (Statement("renamed", "n count"), Statement("renamed", "take take_first"))
    assert [ok for ok, _ in check(tmp_path, renamed, ["seq.py"])] == [None, False]  # a parameter; a rename not made


@pytest.mark.slow
def test_an_added_name_must_be_in_the_file_the_task_names_not_only_in_its_package(toolz: Path) -> None:
    (toolz / "toolz" / "__init__.py").write_text("from .dicttoolz import *\n\n\ndef select_keys(keys, d):\n"
                                                "    return d\n")
    found = statements("Add a function select_keys(keys, d) to toolz/dicttoolz.py", toolz)
    names, folders = modules(toolz, ["toolz/dicttoolz.py"])
    program = script(found, names, folders, ["toolz"], ["toolz.dicttoolz"])
    out = subprocess.run([sys.executable, "-c", program], cwd=toolz, capture_output=True, text=True, timeout=60)
    assert [(v.ok, v.detail) for v in verdicts(found, out.stdout)] == [(False, "not defined in toolz.dicttoolz")]


@pytest.mark.slow
def test_a_rename_whose_new_name_is_defined_nowhere_fails_though_the_old_one_is_gone(toolz: Path) -> None:
    found = statements("Rename `soft_str` to `soft_text` in toolz/dicttoolz.py, its stub and the README.", toolz)
    (toolz / "toolz" / "dicttoolz.py").write_text("def keyfilter(f, d):\n    return d\n")  # the old name deleted only
    (toolz / "toolz" / "dicttoolz.pyi").write_text("def soft_text(x: object) -> str: ...\n")  # a stub does not count
    verdict = check(toolz, found, ["toolz/dicttoolz.py"])
    assert verdict == [(False, "soft_text is defined nowhere in toolz, toolz.dicttoolz (and soft_str is gone)"),
                       (True, "gone")], verdict

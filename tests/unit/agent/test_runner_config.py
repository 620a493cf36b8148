"""What configures a project's tests besides its test files, which the repair rounds keep as they are."""

from __future__ import annotations

import pytest

from cli_agent.agent.judge.proof.runner_config import configures_tests
from cli_agent.contracts import Change


def _change(path: str, before: str | None, after: str | None) -> Change:
    return Change(tool="write_file", kind="write", path=path, before=None if before is None else before.encode(),
                  after=None if after is None else after.encode())


PYPROJECT = '[project]\nname = "calc"\nversion = "1.0"\n\n[tool.pytest.ini_options]\naddopts = "-q"\n'


@pytest.mark.parametrize(("path", "before", "after", "configures"), [
    ("conftest.py", "", "import pytest\n", True),
    ("src/pkg/tests/deep/conftest.py", None, "x = 1\n", True),
    ("pytest.ini", None, "[pytest]\naddopts = -p no_such\n", True),
    ("tox.ini", "", "[tox]\n", True),
    ("noxfile.py", "", "import nox\n", True),
    ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"1.0"', '"1.1"'), False),  # the version: not a test setting
    ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"-q"', '"-q --deselect t.py::x"'), True),
    ("pyproject.toml", '[project]\nname = "calc"\n', '[project]\nname = "calc"\n[tool.pytest.ini_options]\n', True),
    ("pyproject.toml", PYPROJECT, '[tool]\npytest.ini_options = {addopts = "-x"}\n', True),
    ("pyproject.toml", PYPROJECT, "not [ toml", True),
    ("setup.cfg", "[metadata]\nname = calc\n", "[metadata]\nname = calc2\n", False),
    ("setup.cfg", "[metadata]\nname = calc\n", "[metadata]\nname = calc\n[tool:pytest]\naddopts = -x\n", True),
    ("calc.py", "", "x = 1\n", False),
])
def test_what_configures_the_tests(path: str, before: str | None, after: str | None, configures: bool) -> None:
    assert configures_tests(_change(path, before, after)) is configures

"""Finding the project's test command as its test runner finds the tests, and saying where it came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_agent.prompt.project_tests import (
    WALK_ENTRIES,
    Found,
    detect_test_command,
    find_test_command,
    is_test_path,
    shown,
)


def _tree(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.mark.parametrize(("files", "expected", "source"), [
    ({"pyproject.toml": "[project]\n\n[tool.pytest.ini_options]\n"}, "pytest",
     "pyproject.toml [tool.pytest.ini_options]"),
    ({"pytest.ini": "[pytest]\n"}, "pytest", "pytest.ini"),
    ({"setup.cfg": "[metadata]\n[tool:pytest]\ntestpaths = t\n"}, "pytest", "setup.cfg [tool:pytest]"),
    ({"tox.ini": "[tox]\n[pytest]\naddopts = -q\n"}, "pytest", "tox.ini [pytest]"),
    ({"conftest.py": ""}, "pytest", "conftest.py"),
    # the released inflection: its test module at the root, no configuration at all
    ({"inflection.py": "", "test_inflection.py": "", "setup.py": ""}, "pytest", "test_inflection.py"),
    ({"pkg/__init__.py": "", "pkg/tests/test_core.py": ""}, "pytest", "pkg/tests/test_core.py"),
    ({"src/lib/core.py": "", "checks/core_test.py": ""}, "pytest", "checks/core_test.py"),
    ({"tests.py": "import unittest\n\nclass T(unittest.TestCase):\n    pass\n"}, "python3 -m unittest discover",
     "tests.py (unittest test cases)"),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}})}, "npm test", "package.json's test script"),
    ({"package.json": json.dumps({"scripts": {"test": "vitest run"}}), "pnpm-lock.yaml": ""}, "pnpm test", None),
    ({"package.json": json.dumps({"scripts": {"test": "jest"}}), "yarn.lock": ""}, "yarn test", None),
    ({"package.json": json.dumps({"scripts": {"test": 'echo "Error: no test specified" && exit 1'}})}, None, None),
    ({"package.json": "{not json"}, None, None),
    ({"Cargo.toml": "[package]\n"}, "cargo test", "Cargo.toml"),
    ({"go.mod": "module x\n"}, "go test ./...", "go.mod"),
    ({"pom.xml": "<project/>"}, "mvn -q -o test", "pom.xml"),
    ({"build.gradle.kts": "", "gradlew": ""}, "./gradlew test --offline", "build.gradle.kts"),
    ({"Makefile": "all:\n\ntest: all\n\tcc -o t t.c && ./t\n"}, "make test", "Makefile's test target"),
    ({"README.md": "hi", "Makefile": "all:\n"}, None, None),
])
def test_found_with_its_source(tmp_path: Path, files: dict[str, str], expected: str | None,
                               source: str | None) -> None:
    _tree(tmp_path, files)
    found = find_test_command(tmp_path)
    if expected is None:
        assert found is None and detect_test_command(tmp_path) is None
        return
    assert found is not None and expected in found.command and detect_test_command(tmp_path) == found.command
    assert source is None or found.source.startswith(source), found


@pytest.mark.parametrize("skipped", [".git/x", ".venv/lib", "venv", "node_modules/pkg", "build/lib", "dist",
                                     "pkg.egg-info", "myenv_with_cfg"])
def test_the_walk_skips_vcs_environments_node_modules_and_build_output(tmp_path: Path, skipped: str) -> None:
    _tree(tmp_path, {f"{skipped}/test_vendored.py": "def test_x(): pass\n", "app.py": ""})
    if skipped == "myenv_with_cfg":  # a virtual environment under any name: pyvenv.cfg beside it
        (tmp_path / skipped / "pyvenv.cfg").write_text("home = /usr/bin\n")
    assert find_test_command(tmp_path) is None


def test_the_walk_is_bounded(tmp_path: Path) -> None:
    for i in range(WALK_ENTRIES + 10):
        (tmp_path / f"a{i:05}.py").write_text("")
    (tmp_path / "zz").mkdir()
    (tmp_path / "zz" / "test_late.py").write_text("")
    assert find_test_command(tmp_path) is None  # past the bound: not found, and found quickly


def test_config_show_names_the_command_and_where_it_came_from(tmp_path: Path) -> None:
    _tree(tmp_path, {"inflection.py": "", "test_inflection.py": ""})
    assert shown(None, "default", tmp_path).startswith("# tests: ")
    assert "found: test_inflection.py" in shown(None, "default", tmp_path)
    assert shown("make check", "env CLI_AGENT_TEST_COMMAND", tmp_path) == \
        "# tests: make check  # test_command, env CLI_AGENT_TEST_COMMAND"
    assert "none found (set test_command)" in shown(None, "default", tmp_path / "nowhere")


def test_test_paths_of_the_common_runners() -> None:
    assert all(is_test_path(p) for p in ("test_a.py", "a_test.py", "src/a.test.tsx", "a.spec.js", "a_test.go",
                                         "spec/a_spec.rb", "tests/helpers.py", "test/x.js"))
    assert not any(is_test_path(p) for p in ("app.py", "contest.py", "src/latest.js"))


# -- the runner the project documents, run with the active venv's own interpreter ---------------------------------

NOXFILE = '''import nox


@nox.session
def lint(session):
    session.run("ruff", "check", ".")


@nox.session(python=["3.11", "3.12"])
def tests(session):
    session.install("-e", ".")
    session.run("python", "-m", "unittest", "discover", "-s", "tests", "-t", ".")
'''
UNITTEST_CASE = "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        pass\n"


def _venv(folder: Path, with_pytest: bool) -> Path:
    """A venv's layout (read, never run, by the detection): `pyvenv.cfg`, `bin/python`, its site-packages."""
    (folder / "bin").mkdir(parents=True)
    (folder / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (folder / "bin" / "python").write_text("")
    site = folder / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    if with_pytest:
        (site / "pytest").mkdir()
    return folder


@pytest.mark.parametrize(("files", "command", "source"), [
    ({"tox.ini": "[tox]\nenvlist = py3\n\n[testenv]\ndeps = pytest\ncommands =\n    pytest {posargs} tests\n",
      "tests/test_a.py": ""}, "-m pytest -q tests", "tox.ini's commands"),
    ({"tox.ini": "[testenv]\ncommands = python -m unittest discover -s tests\n", "tests/test_a.py": UNITTEST_CASE},
     "-m unittest discover -s tests", "tox.ini's commands"),
    ({"tox.ini": "[testenv]\ncommands = pytest -v --doctest-modules --ignore benchmark.py {posargs}\n",
      "benchmark.py": "import asciitable\n", "test/test_a.py": ""}, "-m pytest -q", "tox.ini's commands"),
    ({"tox.ini": "[testenv]\ncommands = pytest -k slow --deselect test/test_a.py::t -p no:cov test\n",
      "test/test_a.py": ""}, "-m pytest -q test", "tox.ini's commands"),
    ({"noxfile.py": NOXFILE, "tests/test_a.py": UNITTEST_CASE}, "-m unittest discover -s tests -t .",
     "noxfile.py's tests session"),
    ({"Makefile": "test:\n\t@coverage run -m pytest tests/\n", "tests/x": ""}, "-m pytest -q tests/",
     "Makefile's test target"),
    ({"pyproject.toml": '[tool.hatch.envs.default.scripts]\ntest = "pytest {args:tests}"\n'}, "-m pytest -q",
     "pyproject.toml's hatch script default:test"),
    ({".github/workflows/ci.yml": "jobs:\n  t:\n    steps:\n      - run: pip install .\n      - run: |\n"
                                  "          python -m unittest tests.test_a\n"},
     "-m unittest tests.test_a", ".github/workflows/ci.yml's run step"),
])
def test_the_runner_the_project_documents_runs_with_the_venvs_interpreter(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, files: dict[str, str], command: str, source: str) -> None:
    ws = tmp_path / "ws"
    _tree(ws, files)
    python = _venv(tmp_path / "venv", with_pytest=True) / "bin" / "python"
    found = find_test_command(ws, {"VIRTUAL_ENV": str(tmp_path / "venv")})
    assert found is not None and (found.command, found.source) == (f"{python} {command}", source), found
    monkeypatch.setenv("VIRTUAL_ENV", str(tmp_path / "venv"))  # config show names it, from the active venv
    assert shown(None, "", ws).startswith(f"# tests: {python} {command}  # found: {source}")


def test_a_venv_without_pytest_runs_unittest_discover_from_the_tests_folder(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws, {"nox.py": "", "src/pkg/__init__.py": "", "tests/test_pkg.py": UNITTEST_CASE,
               "pyproject.toml": "[project]\nname = 'pkg'\n"})
    venv = _venv(tmp_path / "venv", with_pytest=False)
    (venv / "lib" / "python3.11" / "site-packages" / "pkg.pth").write_text(f"{ws / 'src'}\n")  # `pip install -e .`
    found = find_test_command(ws, {"VIRTUAL_ENV": str(venv)})
    assert found is not None and found.command == f"{venv}/bin/python -m unittest discover -s tests", found
    assert "has no pytest" in found.source
    (ws / "tests" / "test_pkg.py").write_text("def test_x():\n    assert True\n")  # pytest-style: it cannot run here
    found = find_test_command(ws, {"VIRTUAL_ENV": str(venv)})
    assert found is not None and found.command == f"{venv}/bin/python -m pytest -q", found
    pth = venv / "lib" / "python3.11" / "site-packages" / "more.pth"  # pytest reached through a .pth counts
    (tmp_path / "elsewhere" / "pytest").mkdir(parents=True)
    pth.write_text(f"import site; site.addsitedir({str(tmp_path / 'elsewhere')!r})\n")
    assert find_test_command(ws, {"VIRTUAL_ENV": str(venv)}) == type(found)(f"{venv}/bin/python -m pytest -q",
                                                                            "tests/test_pkg.py (pytest finds "
                                                                            "test_*.py and *_test.py)")


def test_hostile_runner_files_are_read_within_bounds_and_never_raise(tmp_path: Path) -> None:
    _tree(tmp_path, {"tox.ini": "[testenv]\ncommands = pytest '\n" + "x" * 300_000,
                     "noxfile.py": "def tests(session:\n" * 5000, "Makefile": "test:\n" + "\tpytest\t'\n" * 10_000,
                     "pyproject.toml": "[tool.hatch\n", ".github/workflows/a.yml": "run: |\n" + "  x\n" * 50_000})
    found = find_test_command(tmp_path, {})  # the 200 command lines each file kind is read for say no pytest
    assert found is not None and found.command == "make test", found


NOX_ENV = '''import nox


@nox.session
def tests(session):
    session.env["PYTHONPATH"] = "src"
    session.env["DEBUG"] = os.environ.get("DEBUG", "")
    session.run("python", "-m", "unittest", "discover", "-s", "tests", env={"APP_MODE": "test", "N": 3})
'''


@pytest.mark.parametrize(("files", "env"), [
    ({"tox.ini": "[testenv]\nsetenv =\n    PYTHONPATH = {toxinidir}/src\n    X = {envsitepackagesdir}\n"
                 "    PATH = /evil\n    MODE=a b\ncommands = python -m unittest\n"}, "PYTHONPATH=src MODE='a b' "),
    ({"tox.ini": "[testenv]\nset_env = PYTHONPATH = {tox_root}\n\n[testenv:unit]\nsetenv = LANG=C\n"
                 "commands = python -m unittest\n"}, "PYTHONPATH=. LANG=C "),
    ({"noxfile.py": NOX_ENV}, "PYTHONPATH=src APP_MODE=test "),
    ({"Makefile": "test:\n\tPYTHONPATH=$(CURDIR)/src python -m unittest discover -s tests\n"}, "PYTHONPATH=src "),
    ({"Makefile": "test:\n\tenv PYTHONPATH=lib:$(VENDOR) python -m unittest\n"}, ""),
])
def test_the_environment_the_project_sets_for_its_tests_comes_with_the_run(
        tmp_path: Path, files: dict[str, str], env: str) -> None:
    ws = tmp_path / "ws"
    _tree(ws, {**files, "tests/test_a.py": UNITTEST_CASE})
    python = _venv(tmp_path / "venv", with_pytest=False) / "bin" / "python"
    found = find_test_command(ws, {"VIRTUAL_ENV": str(tmp_path / "venv")})
    assert found is not None and found.command.startswith(f"{env}{python} -m unittest"), found


def test_a_src_layout_the_venv_does_not_import_from_here_gets_src_on_pythonpath(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _tree(ws, {"noxfile.py": NOXFILE, "src/pkg/__init__.py": "", "tests/test_pkg.py": UNITTEST_CASE})
    venv = _venv(tmp_path / "venv", with_pytest=False)
    site = venv / "lib" / "python3.11" / "site-packages"
    python = venv / "bin" / "python"
    command = f"{python} -m unittest discover -s tests -t ."
    for pth, expected in [(None, f"PYTHONPATH=src {command}"),  # not installed
                          (f"{tmp_path}/original/src", f"PYTHONPATH=src {command}"),  # a copy of another workspace's
                          (f"{ws}/src2", f"PYTHONPATH=src {command}"),
                          (f"{ws}/src", command)]:  # installed from here (`pip install -e .`): as it is
        (site / "pkg.pth").unlink(missing_ok=True)
        if pth:
            (site / "pkg.pth").write_text(f"{pth}\n")
        found = find_test_command(ws, {"VIRTUAL_ENV": str(venv)})
        assert found is not None and found.command == expected, (pth, found)
    (site / "pkg.pth").unlink()
    (site / "__editable___pkg_1_0_finder.py").write_text(f"MAPPING = {{'pkg': '{ws}/src/pkg'}}\n")
    assert find_test_command(ws, {"VIRTUAL_ENV": str(venv)}) == Found(command, "noxfile.py's tests session")
    (ws / "src" / "pkg" / "__init__.py").unlink()  # no package under src/: nothing to add
    (site / "__editable___pkg_1_0_finder.py").unlink()
    assert find_test_command(ws, {"VIRTUAL_ENV": str(venv)}) == Found(command, "noxfile.py's tests session")

"""A tiny released project for the real suite's offline tests: its files, a build backend of its own (PEP 517
`backend-path`, nothing to fetch), its sdist built by `python -m build --sdist` and served from a local folder, and
a suite file naming it as `tinycalc==1.0` with two tasks."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BACKEND = '''
import os
import tarfile

NAME, VERSION = "tinycalc", "1.0"
FILES = ("pyproject.toml", "backend.py", "PKG-INFO", "conftest.py", "tinycalc/__init__.py", "test_tinycalc.py")
METADATA = "Metadata-Version: 2.1\\nName: tinycalc\\nVersion: 1.0\\n"


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    with open("PKG-INFO", "w", encoding="utf-8") as info:
        info.write(METADATA)
    name = NAME + "-" + VERSION + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, name), "w:gz") as archive:
        for path in FILES:
            archive.add(path, arcname=NAME + "-" + VERSION + "/" + path)
    return name


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    folder = NAME + "-" + VERSION + ".dist-info"
    os.makedirs(os.path.join(metadata_directory, folder), exist_ok=True)
    with open(os.path.join(metadata_directory, folder, "METADATA"), "w", encoding="utf-8") as meta:
        meta.write(METADATA)
    return folder
'''

FILES = {
    "pyproject.toml": '[build-system]\nrequires = []\nbuild-backend = "backend"\nbackend-path = ["."]\n\n'
                      '[project]\nname = "tinycalc"\nversion = "1.0"\n',
    "backend.py": BACKEND,
    "tinycalc/__init__.py": '"""A calculator."""\n\n\ndef add(a, b):\n    return a + b\n\n\n'
                            'def mean(values):\n    return sum(values) / len(values)\n',
    "conftest.py": "",
    "test_tinycalc.py": "from tinycalc import add, mean\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                        "def test_mean():\n    assert mean([1, 2, 3]) == 2\n",
}

SUITE = '''
[[project]]
name = "tinycalc"
version = "1.0"
layout = "tests at the root"
tests = ["test_tinycalc.py"]
test_deps = []
pip_args = ["--no-index", "--find-links", "{index}"]

[[task]]
name = "tiny-add"
kind = "bug: a wrong operator"
project = "tinycalc==1.0"
prompt = "add(2, 3) returns -1, it should be 5. Fix add in tinycalc/__init__.py."
check = "test_tinycalc.py -k add"
change = [{{ file = "tinycalc/__init__.py", old = "    return a + b", new = "    return a - b" }}]

[[task]]
name = "tiny-mean"
kind = "feature: a missing function"
project = "tinycalc==1.0"
prompt = "Add mean(values) to tinycalc/__init__.py: the arithmetic mean, mean([1, 2, 3]) == 2."
check = "test_tinycalc.py"
change = [{{ file = "tinycalc/__init__.py", new = "", old = """


def mean(values):
    return sum(values) / len(values)
""" }}]
'''

SHOW_ENV = [{"tool_calls": [{"name": "run_command", "arguments": {
    "command": "echo venv=$VIRTUAL_ENV; echo path=$PATH"}}]},
    {"text": "That is the environment."}]

FIX_ADD = [{"tool_calls": [{"name": "edit_file", "arguments": {
    "path": "tinycalc/__init__.py", "old": "    return a - b", "new": "    return a + b"}}]}, {"text": "Fixed."}]


def published(folder: Path) -> Path:
    """The project written under `folder/src`, its sdist built into `folder/index`; the suite file naming it."""
    source, index = folder / "src", folder / "index"
    for name, text in FILES.items():
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        (source / name).write_text(text, encoding="utf-8")
    subprocess.run([sys.executable, "-m", "build", "--sdist", "--no-isolation", "--outdir", str(index), str(source)],
                   check=True, capture_output=True, timeout=120)
    suite = folder / "suite.toml"
    suite.write_text(SUITE.format(index=index), encoding="utf-8")
    return suite


def with_pytest(venv: Path) -> None:
    """Offline, pip cannot install pytest into the project's venv: give it this interpreter's pytest instead (a
    `.pth` that adds the folder pytest was imported from), as `test_deps = ["pytest"]` would online."""
    import pytest

    where = Path(pytest.__file__).resolve().parent.parent
    for site in (venv / "lib").glob("python*/site-packages"):
        (site / "_pytest_from_the_test.pth").write_text(f"import site; site.addsitedir({str(where)!r})\n",
                                                        encoding="utf-8")

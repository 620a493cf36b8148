"""What a project says about running its tests, read and never run, and the interpreter that runs them.

`documented(root)` reads, in order: `tox.ini`'s `commands`, a test-like session's `session.run(...)` in
`noxfile.py`, a Makefile's `test` recipe, `pyproject.toml`'s `[tool.hatch.envs.*.scripts]`, then the `run:` steps
of the GitHub Actions workflows. The first that runs pytest or unittest gives a `Runner`: which of the two, its
arguments that still mean something outside that tool (test paths; unittest's `-s`/`-t`/`-p`), the environment the
project gives that run where it can be read plainly (`env`: tox's `setenv`, nox's `session.env[...]` and
`session.run(..., env={...})`, a `NAME=value` prefix of the command line, with `{toxinidir}` or `$(CURDIR)` as the
root: `PYTHONPATH = {toxinidir}/src` is `PYTHONPATH=src`), and where it was read. `interpreter(root, environ)` is
the active virtual environment's Python (`VIRTUAL_ENV`, else a `.venv` or `venv` at the root), and `has_pytest`
says, by looking at its site-packages, whether it can import pytest. `src_first` says whether a `src/` layout's tests
must be told where the package is (`PYTHONPATH=src`): the venv does not import it from this workspace's `src/`.
"""

from __future__ import annotations

import ast
import itertools
import os
import re
import shlex
from collections.abc import Iterator, Mapping
from pathlib import Path

from cli_agent.contracts import dataclass
from cli_agent.fs import read_regular_or_none
from cli_agent.validated import parse_toml

_LIMIT = 256 * 1024  # the most of any one file read
_TEST_NAMES = re.compile(r"^(tests?|unit|unittests?|pytest|check|cov(erage)?)(\b|_|-|\d|$)|(^|[_-])tests?$")
_UNITTEST_OPTIONS = {"-s": "--start-directory", "-t": "--top-level-directory", "-p": "--pattern"}
# pytest's options (and its common plugins') that take a value as the next word: that word is no test path
_PYTEST_VALUED = frozenset({
    "-k", "-m", "-p", "-c", "-o", "-r", "-W", "-n", "--ignore", "--ignore-glob", "--deselect", "--rootdir",
    "--confcutdir", "--basetemp", "--junitxml", "--junit-xml", "--junit-prefix", "--cov", "--cov-report",
    "--cov-config", "--cov-fail-under", "--durations", "--durations-min", "--maxfail", "--tb", "--import-mode",
    "--doctest-glob", "--doctest-report", "--log-level", "--log-file", "--log-file-level", "--log-cli-level",
    "--log-format", "--override-ini", "--capture", "--color", "--code-highlight", "--timeout", "--dist",
    "--html", "--config-file", "--inifile", "--reruns", "--randomly-seed", "--benchmark-save", "--numprocesses",
    "--pythonwarnings", "--verbosity", "--report-log", "--junit-family"})
_MAX_WORKFLOWS = 20
_MAX_LINES = 200  # command lines looked at in each file kind, at most
_MAX_LINE = 1000  # characters of one command line
_MAX_ENV = 16  # variables carried from what the project documents, at most
_MAX_SITE_FILES = 200  # `.pth` and editable finder files read in one site-packages, at most
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# what would change which interpreter runs the tests, or where the run looks for its home: never carried
_KEPT_OUT = frozenset({"PATH", "HOME", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONSTARTUP", "PYTHONNOUSERSITE"})
# the project's root, as tox, make and a shell name it; the tests run there, so it is "."
_ROOT = re.compile(r"\{(?:toxinidir|tox_root)\}|\$[({](?:CURDIR|PWD)[)}]|\$\(shell pwd\)|\$\$?PWD")
Env = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Runner:
    tool: str  # "pytest" or "unittest"
    args: tuple[str, ...]  # what still means something run with the venv's own interpreter: paths, discover options
    source: str  # "tox.ini's commands", "noxfile.py's tests session", ...
    env: Env = ()  # the variables the project sets for that run (`(("PYTHONPATH", "src"),)`)


def _text(path: Path) -> str:
    data = read_regular_or_none(path, _LIMIT)  # a FIFO or a device is skipped, never waited on
    return "" if data is None else data.decode("utf-8", errors="replace")


def runner_in(line: str, root: Path, source: str, env: Env = ()) -> Runner | None:
    """The pytest or unittest run a command line asks for (`pytest tests`, `python -m unittest discover -s tests`,
    `coverage run -m pytest`, `PYTHONPATH=src python -m unittest`), None for any other command; `env`: what the
    project sets for it besides (tox's `setenv`, nox's `session.env`)."""
    try:
        words = shlex.split(line.replace("{posargs}", ""), comments=True)
    except ValueError:
        return None
    prefix = _prefix(words)
    env = merged(env, prefix)
    for at, word in enumerate(words):
        if word.rsplit("/", 1)[-1] in ("pytest", "py.test"):  # `pytest`, `.venv/bin/pytest`, `-m pytest`
            return Runner("pytest", _paths(words[at + 1:], root), source, env)
        if word == "unittest" and at and words[at - 1] == "-m":
            return Runner("unittest", _discover(words[at + 1:]), source, env)
    return None


def _prefix(words: list[str]) -> Env:
    """The `NAME=value` words a command line starts with (after an `env`), as the environment they set."""
    pairs = []
    for word in words[1:] if words[:1] == ["env"] else words:
        name, sep, value = word.partition("=")
        if not sep or not _NAME.fullmatch(name):
            break
        pairs.append((name, value))
    return tuple(pairs)


def merged(env: Env, more: Env) -> Env:
    """`env` with `more` over it, each value read plainly (the root as "."; one still holding a substitution the
    run cannot make, `{envsitepackagesdir}`, `$(VAR)`, is left out), at most `_MAX_ENV` of them."""
    out: dict[str, str] = {}
    for name, value in (*env, *more):
        plain = _ROOT.sub(".", value.strip())
        if name in _KEPT_OUT or not _NAME.fullmatch(name) or len(plain) > _MAX_LINE or re.search(r"[{$`]", plain):
            continue
        out[name] = os.pathsep.join(os.path.normpath(part) if part.startswith(".") else part
                                    for part in plain.split(os.pathsep)) if name.endswith("PATH") else plain
    return tuple(out.items())[:_MAX_ENV]


def _paths(words: list[str], root: Path) -> tuple[str, ...]:
    """The arguments that are test paths in the project (`tests`, `tests/test_x.py::T`): options and their values
    belong to the project's own environment and are left to it (`--ignore benchmark.py` names a file to leave out,
    not one to run)."""
    values = {at + 1 for at, w in enumerate(words) if w in _PYTEST_VALUED}
    return tuple(w for at, w in enumerate(words) if at not in values and not w.startswith("-") and ".." not in w
                 and not w.startswith("/") and (root / w.split("::")[0]).exists())


def _discover(words: list[str]) -> tuple[str, ...]:
    """What follows `-m unittest`: `discover` with its options (`-s tests -t .`, also from the positional `discover
    START PATTERN TOP`), the test modules named (`tests.test_x`), or `discover` alone for a bare `-m unittest`."""
    if words and words[0] != "discover":
        named = tuple(w for w in words if re.fullmatch(r"[A-Za-z_][\w.]*", w))
        return named or ("discover",)
    kept: list[str] = ["discover"]
    rest = words[1:] if words else []
    positional = 0
    at = 0
    while at < len(rest):
        word = rest[at]
        option = next((short for short, long in _UNITTEST_OPTIONS.items() if word in (short, long)), None)
        if option and at + 1 < len(rest):
            kept += [option, rest[at + 1]]
            at += 2
            continue
        if not word.startswith("-") and positional < 3:
            kept += [("-s", "-p", "-t")[positional], word]
            positional += 1
        at += 1
    return tuple(kept)


def _ini(text: str) -> dict[str, dict[str, list[str]]]:
    """An INI file's sections, each key with its value's lines (the first and the indented ones after it)."""
    sections: dict[str, dict[str, list[str]]] = {}
    keys: dict[str, list[str]] | None = None
    values: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            keys, values = sections.setdefault(line.strip("[]").strip(), {}), None
            continue
        if keys is None or not line or line.startswith(("#", ";")):
            continue
        key, sep, value = line.partition("=")
        if sep and not raw[:1].isspace():
            values = keys.setdefault(key.strip(), [])
            line = value.strip()
        if values is not None and line:
            values.append(line)
    return sections


def _tox(root: Path) -> Iterator[tuple[str, str, Env]]:
    """Each `commands` line of a `[testenv...]`, with the `setenv` (`set_env`) of `[testenv]` and of its own
    section."""
    sections = _ini(_text(root / "tox.ini"))

    def setenv(keys: dict[str, list[str]]) -> Env:
        lines = [*keys.get("setenv", ()), *keys.get("set_env", ())]
        return tuple((name.strip(), value.strip()) for name, sep, value in (line.partition("=") for line in lines)
                     if sep)

    for section, keys in sections.items():
        if section.startswith("testenv"):
            env = merged(setenv(sections.get("testenv", {})), setenv(keys) if section != "testenv" else ())
            for line in keys.get("commands", ()):
                yield line.removeprefix("-").strip(), "tox.ini's commands", env


def _nox(root: Path) -> Iterator[tuple[str, str, Env]]:
    """Each `session.run(...)` of a test-like session, with what the session sets in `session.env["NAME"] = "..."`
    and the call's own `env={"NAME": "..."}` (constant strings only)."""
    text = _text(root / "noxfile.py")
    if "session" not in text:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef) or not _TEST_NAMES.search(node.name):
            continue
        session_env = tuple(pair for each in ast.walk(node) if isinstance(each, ast.Assign)
                            for pair in _env_item(each))
        for call in ast.walk(node):
            if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "run":
                words = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
                own = next((_constants(k.value) for k in call.keywords if k.arg == "env"), ())
                if words:
                    yield shlex.join(words), f"noxfile.py's {node.name} session", merged(session_env, own)


def _env_item(node: ast.Assign) -> Env:
    """`session.env["NAME"] = "value"` as a pair; () for any other assignment."""
    target = node.targets[0] if len(node.targets) == 1 else None
    if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Attribute) and target.value.attr == "env"
            and isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
            and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)):
        return ((target.slice.value, node.value.value),)
    return ()


def _constants(node: ast.expr) -> Env:
    """A dict literal's constant string items (`{"PYTHONPATH": "src"}`)."""
    if not isinstance(node, ast.Dict):
        return ()
    return tuple((k.value, v.value) for k, v in zip(node.keys, node.values, strict=True)
                 if isinstance(k, ast.Constant) and isinstance(k.value, str)
                 and isinstance(v, ast.Constant) and isinstance(v.value, str))


def _make(root: Path) -> Iterator[tuple[str, str]]:
    for name in ("Makefile", "makefile", "GNUmakefile"):
        recipe = False
        for line in _text(root / name).splitlines():
            if re.match(r"^tests?\s*:", line):
                recipe = True
            elif recipe and line.startswith("\t"):
                yield line.strip().lstrip("@-"), f"{name}'s test target"
            elif line.strip() and not line.startswith("#"):
                recipe = False


def _hatch(root: Path) -> Iterator[tuple[str, str]]:
    text = _text(root / "pyproject.toml")
    if "tool.hatch" not in text:
        return
    try:
        envs = parse_toml(text, "pyproject.toml", ValueError).data.get("tool", {}).get("hatch", {}).get("envs", {})
    except ValueError:  # not TOML: no hatch scripts to read
        return
    for env_name, env in (envs.items() if isinstance(envs, dict) else ()):
        scripts = env.get("scripts", {}) if isinstance(env, dict) else {}
        for key, value in (scripts.items() if isinstance(scripts, dict) else ()):
            if _TEST_NAMES.search(str(key)):
                for line in value if isinstance(value, list) else [value]:
                    yield str(line), f"pyproject.toml's hatch script {env_name}:{key}"


def _workflows(root: Path) -> Iterator[tuple[str, str]]:
    folder = root / ".github" / "workflows"
    try:
        files = sorted(p for p in folder.iterdir() if p.suffix in (".yml", ".yaml"))[:_MAX_WORKFLOWS]
    except OSError:
        return
    for path in files:
        block = None
        for line in _text(path).splitlines():
            indent = len(line) - len(line.lstrip())
            if block is not None and (indent > block or not line.strip()):
                yield line.strip(), f".github/workflows/{path.name}'s run step"
                continue
            block = None
            match = re.match(r"^\s*(?:-\s+)?run:\s*(.*)$", line)
            if match:
                value = match.group(1).strip()
                if value in ("|", ">", "|-", ">-"):
                    block = indent
                else:
                    yield value, f".github/workflows/{path.name}'s run step"


def documented(root: Path) -> Runner | None:
    """The pytest or unittest run the project documents, first of tox, nox, make, hatch and its CI, with the
    environment it sets for that run; None when none of them names one."""
    plain = (((line, source, ()) for line, source in lines) for lines in (_make(root), _hatch(root), _workflows(root)))
    for lines in (_tox(root), _nox(root), *plain):
        for line, source, env in itertools.islice(lines, _MAX_LINES):
            found = runner_in(line[:_MAX_LINE], root, source, env)
            if found:
                return found
    return None


def interpreter(root: Path, environ: Mapping[str, str]) -> str | None:
    """The active virtual environment's Python: `VIRTUAL_ENV`'s, else the root's `.venv` or `venv`; None without."""
    for prefix in (environ.get("VIRTUAL_ENV", ""), str(root / ".venv"), str(root / "venv")):
        if prefix and os.path.isfile(os.path.join(prefix, "pyvenv.cfg")):
            for name in ("python", "python3"):
                candidate = os.path.join(prefix, "bin", name)
                if os.path.isfile(candidate):
                    return candidate
    return None


def has_pytest(python: str) -> bool:
    """Whether a venv's interpreter can import pytest: in its site-packages, or in a folder a `.pth` there adds."""
    prefix = Path(python).parent.parent
    if (prefix / "bin" / "pytest").is_file():
        return True
    for site in list((prefix / "lib").glob("python*/site-packages"))[:4]:
        folders = [site]
        for pth in sorted(site.glob("*.pth"))[:50]:
            folders += [Path(p) for p in re.findall(r"""addsitedir\(\s*['"]([^'"]+)['"]""", _text(pth))]
            folders += [Path(line.strip()) for line in _text(pth).splitlines()
                        if line.strip().startswith("/") and not line.startswith("import")]
        if any((folder / "pytest").is_dir() or (folder / "pytest.py").is_file() for folder in folders):
            return True
    return False


def src_first(root: Path, python: str | None) -> bool:
    """Whether the tests of a `src/` layout (a package or module right under `src/`) must get `PYTHONPATH=src` to
    import the workspace's own code: the venv does not import it from this workspace's `src/` (a `.pth` line or an
    editable install's finder naming it), so it has none (not installed), a copy (installed), or another folder's (an
    editable install of the workspace this one was copied from). Without a venv, always for a `src/` layout."""
    try:
        entries = list(itertools.islice(os.scandir(root / "src"), _MAX_SITE_FILES))
    except OSError:
        return False
    if not any(e.name.isidentifier() and os.path.isfile(os.path.join(e.path, "__init__.py")) if e.is_dir() else
               e.name.endswith(".py") and e.name[:-3].isidentifier() for e in entries):
        return False
    if python is None:
        return True
    here = re.compile(re.escape(str((root / "src").resolve())) + r"(?![\w.-])")
    for site in list((Path(python).parent.parent / "lib").glob("python*/site-packages"))[:4]:
        files = itertools.islice((*site.glob("*.pth"), *site.glob("__editable__*finder*.py")), _MAX_SITE_FILES)
        if any(here.search(_text(path)) for path in files):
            return False
    return True

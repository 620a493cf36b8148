"""Every kind of file cli-agent checks (config, MCP servers, tool specs, facts, workflows, eval suites) is read by
the one TOML reader (`cli_agent.validated.reader`) and its errors have one wording: `file:LINE: key: message`."""

from __future__ import annotations

import re
import tomllib
import types
from pathlib import Path
from typing import Any

import pytest

from cli_agent.config.loading import load_settings
from cli_agent.contracts.errors import ConfigError, SpecError, UsageError, WorkflowError
from cli_agent.eval import real, scenarios
from cli_agent.facts.store import FactStore
from cli_agent.tools.specs import load_spec_file
from cli_agent.validated import reader
from cli_agent.workflows.files import load_workflow_file

pytestmark = pytest.mark.usefixtures("isolated_home")

SPEC = ('name = "greet"\ncategory = "Edit"\ndescription = "Say hello."\nmutates = false\nkind = "other"\n'
        'verb = "Greet"\n\n[parameters]\ntype = "object"\n')
WORKFLOW = 'description = "D"\n\n[[steps]]\nprompt = "x"\n'
SCENARIO = ('[[scenario]]\nname = "s"\ncovers = "c"\nprompt = "p"\nreplies = [{ text = "hi" }]\n\n'
            '[scenario.expect]\nexit_code = 0\n')
TASK = '[[task]]\nname = "t"\nprompt = "p"\n\n[task.check]\npython = "pass"\n'
REAL = ('[[task]]\nname = "t"\nkind = "bug"\nproject = "p==1"\nprompt = "p"\ncheck = "c.py"\n\n'
        '[[task.change]]\nfile = "a.py"\nold = "x"\nnew = "y"\n\n'
        '[[project]]\nname = "p"\nversion = "1"\nlayout = "l"\ntests = ["t"]\n')


def _user_config(home: Path, text: str) -> Path:
    path = home / "config" / "config.toml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def _in(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def _config(home: Path, tmp: Path, text: str) -> tuple[str, Any]:
    return str(_user_config(home, text)), lambda: load_settings({}, workspace=tmp, env={})


def _spec(tmp: Path, text: str) -> tuple[str, Any]:
    path = _in(tmp / "specs", "greet.toml", text)
    return str(path), lambda: load_spec_file(path)


def _facts(tmp: Path, text: str) -> tuple[str, Any]:
    path = _in(tmp / ".cli-agent", "facts.toml", text)
    return str(path), lambda: FactStore(tmp).committed()


def _workflow(tmp: Path, text: str) -> tuple[str, Any]:
    path = _in(tmp / "wf", "wf.toml", text)
    return str(path), lambda: load_workflow_file(path, ["read_file"])


def _suite(monkeypatch: pytest.MonkeyPatch, tmp: Path, name: str, text: str) -> tuple[str, Any]:
    _in(tmp / "eval", name, text)
    if name == "real.toml":
        monkeypatch.setattr(real, "_root", lambda: tmp / "eval")
        return f"cli_agent/eval/{name}", real.load_real_tasks
    monkeypatch.setattr(scenarios, "resources", types.SimpleNamespace(files=lambda _package: tmp / "eval"))
    load = scenarios.load_scenarios if name == "offline.toml" else scenarios.load_live_tasks
    return f"cli_agent/eval/{name}", load


def _kind(kind: str, text: str, home: Path, tmp: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, Any]:
    """(the file as errors name it, a call that reads it) for `text` written as a file of `kind`."""
    if kind in ("config", "mcp"):
        return _config(home, tmp, text)
    if kind in ("offline.toml", "live.toml", "real.toml"):
        return _suite(monkeypatch, tmp, kind, text)
    return {"spec": _spec, "facts": _facts, "workflow": _workflow}[kind](tmp, text)


ERRORS = {"config": ConfigError, "mcp": ConfigError, "spec": SpecError, "facts": ConfigError,
          "workflow": WorkflowError, "offline.toml": UsageError, "live.toml": UsageError, "real.toml": UsageError}

WRONG_TYPE = [  # (kind, text, line, key, message)
    ("config", 'model = "m"\nmax_steps = "many"\n', 2, "max_steps", "expected an integer, found string 'many'"),
    ("mcp", '[mcp_servers.git]\ncommand = "git-mcp"\ntimeout_s = "slow"\n', 3, "mcp_servers.git.timeout_s",
     "expected a number, found string 'slow'"),
    ("spec", SPEC.replace('category = "Edit"', "category = 3"), 2, "category", "expected a string, found integer 3"),
    ("facts", "[locks]\npaths = ['a']\n\n[[facts]]\nid = 'f1'\ntext = 7\n", 6, "facts[0].text",
     "expected a string, found integer 7"),
    ("workflow", WORKFLOW + "tools = 'read_file'\n", 5, "steps[0].tools",
     "expected an array, found string 'read_file'"),
    ("offline.toml", SCENARIO.replace("exit_code = 0", 'exit_code = "zero"'), 8, "scenario[0].expect.exit_code",
     "expected an integer, found string 'zero'"),
    ("live.toml", TASK.replace('python = "pass"', "unchanged = 3"), 6, "task[0].check.unchanged",
     "expected true or false, found integer 3"),
    ("real.toml", REAL.replace('old = "x"', "old = 1"), 10, "task[0].change[0].old",
     "expected a string, found integer 1"),
]


@pytest.mark.parametrize(("kind", "text", "line", "key", "message"), WRONG_TYPE, ids=[w[0] for w in WRONG_TYPE])
def test_a_wrong_type_names_file_line_and_key(kind: str, text: str, line: int, key: str, message: str,
                                              isolated_home: Path, tmp_path: Path,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    where, load = _kind(kind, text, isolated_home, tmp_path, monkeypatch)
    with pytest.raises(ERRORS[kind]) as info:
        load()
    assert str(info.value) == f"{where}:{line}: {key}: {message}"


SYNTAX = [  # (kind, text with a syntax error on the line given)
    ("config", 'model = "m"\nmax_steps = = 3\n', 2),
    ("mcp", '[mcp_servers.git]\ncommand = "git-mcp"\nargs = ["a"\n', 3),
    ("spec", SPEC.replace('description = "Say hello."', 'description = "Say hello.'), 3),
    ("facts", "[locks]\npaths = []\n\n[[facts]\n", 4),
    ("workflow", 'description = "D"\n[[steps]]\nprompt = x\n', 3),
    ("offline.toml", SCENARIO.replace('covers = "c"', "covers c"), 3),
    ("live.toml", TASK.replace("[task.check]", "[task.check"), 5),
    ("real.toml", REAL.replace('kind = "bug"', 'kind = "bug" "bug"'), 3),
]


@pytest.mark.parametrize(("kind", "text", "line"), SYNTAX, ids=[s[0] for s in SYNTAX])
def test_a_toml_syntax_error_names_file_line_and_column(kind: str, text: str, line: int, isolated_home: Path,
                                                         tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where, load = _kind(kind, text, isolated_home, tmp_path, monkeypatch)
    with pytest.raises(ERRORS[kind]) as info:
        load()
    assert re.fullmatch(rf"{re.escape(where)}:{line}: invalid TOML: .+ \((column \d+|at the end)\)", str(info.value))


GOOD = [("config", 'model = "m"\n'), ("mcp", '[mcp_servers.git]\ncommand = "git-mcp"\n'), ("spec", SPEC),
        ("facts", "[locks]\npaths = []\n"), ("workflow", WORKFLOW), ("offline.toml", SCENARIO),
        ("live.toml", TASK), ("real.toml", REAL)]


@pytest.mark.parametrize(("kind", "text"), GOOD, ids=[g[0] for g in GOOD])
def test_each_kind_is_read_by_the_one_reader(kind: str, text: str, isolated_home: Path, tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """The reader's parser is swapped for one that records what it parses: a kind with a reader of its own would
    load without it seeing the file."""
    parsed: list[str] = []

    def loads(source: str) -> dict[str, Any]:
        parsed.append(source)
        return tomllib.loads(source)

    monkeypatch.setattr(reader, "tomllib", types.SimpleNamespace(loads=loads, TOMLDecodeError=tomllib.TOMLDecodeError))
    _, load = _kind(kind, text, isolated_home, tmp_path, monkeypatch)
    load()
    assert text in parsed


def test_no_module_but_the_reader_parses_toml() -> None:
    package = Path(reader.__file__).parent.parent
    parsers = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                     if "tomllib" in path.read_text(encoding="utf-8"))
    assert parsers == ["validated/reader.py"]


@pytest.mark.parametrize(("text", "loc", "line"), [
    ('a = 1\n[t]\nb = 2\n"c.d" = 3\n', ("t", "b"), 3),
    ('a = 1\n[t]\nb = 2\n"c.d" = 3\n', ("t", "c.d"), 4),
    ("[t]\nb = 2\n", ("t", "missing"), 1),  # a missing key: its table
    ('s = """\nx = 1\n"""\nx = 2\n', ("x",), 4),  # a key inside a multi-line string is no key
    ("[[s]]\na = 1\n[[s]]\na = 2\n[s.args]\nk = 1\n", ("s", 1, "args", "k"), 6),
    ("[a.b]\nc = 1\n", ("a",), 1),  # the first line under a key that has no line of its own
    ("x = 1\n", ("y",), None),
])
def test_the_line_of_a_key(text: str, loc: tuple[Any, ...], line: int | None) -> None:
    assert reader.parse_toml(text, "f.toml", ValueError).line_of(loc) == line

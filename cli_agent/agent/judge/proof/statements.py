"""What a task states about names, checked beside its examples (`task_examples`) and the project's tests.

A task that says "`from toolz import select_keys` works", "Add a function select_keys(keys, d) to
toolz/dicttoolz.py", or "Rename soft_str to soft_text. Do not keep the old name." states facts the project's old
tests cannot see: they never import a name that did not exist, and they may define a renamed function themselves.
`statements(task, root)` finds them:

- an import: `from PKG import NAME` (or `import PKG.MOD` in backticks) of a module in the workspace; it must work,
  unless the sentence says it should fail;
- a name the task adds: a function or method written with its parameters, a class, or a backticked name after
  "add", "define" or "implement" and its kind ("add a function `select_keys`"); it must be defined where the task
  says (the modules of the files the task names, else of the files the run changed; test files never count);
- a name the task renames ("rename A to B") is two statements: B must be defined there, in the module (a stub does
  not count; not judged when A or B is a parameter of a function there), and A must be gone, unless the task says
  to keep it ("keep the old name as an alias");
- a name the task removes ("remove the function A", "delete `A`"): it must be gone.

"Defined" means a module's attribute, or an attribute of a class the module defines. `script(...)` is a Python
program that checks them in the command sandbox and prints one marked JSON line each; `verdicts(output)` reads them
back. When a module does not import, the names are not checked (the project's tests judge that); an import the task
states is checked all the same, unless it fails for want of a package that is not in the workspace.
"""

from __future__ import annotations

import builtins
import json
import keyword
import re
from pathlib import Path

from cli_agent.agent.judge.task_examples import added_names, marked_rows
from cli_agent.contracts import dataclass

MARK = "cli-agent-statement "
MAX_STATEMENTS = 8
MAX_TASK_CHARS = 20_000
TIMEOUT_S = 10  # the whole check's alarm

_BUILTINS = frozenset(dir(builtins))
_NAME = r"[A-Za-z_]\w*"
_DOTTED = rf"{_NAME}(?:\.{_NAME})*"
_FROM_IMPORT = re.compile(rf"\bfrom\s+({_DOTTED})\s+import\s+({_NAME}(?:\s*,\s*{_NAME})*)")
_TICKED_IMPORT = re.compile(rf"`import\s+({_DOTTED})`")
_SHOULD_FAIL = re.compile(r"\b(?:should|must)\s+(?:fail|raise|not\s+work|no\s+longer\s+work)|\bno\s+longer\s+works?")
_ADD = re.compile(rf"\b(?:add|adds|adding|define|implement|create)\s+(?:(?:a|an|the|new|public)\s+)*"
                  rf"(?:function|method|class|helper|constant|property)\s+`({_NAME})`", re.IGNORECASE)
_RENAME = re.compile(rf"\brename[sd]?\s+(?:(?:the\s+)?(?:function|method|class|attribute|constant)\s+)?`?({_DOTTED})"
                     rf"`?(?:\s+in\s+`?[\w./-]+`?)?\s+(?:to|as|into)\s+`?({_NAME})`?", re.IGNORECASE)  # "in more.py"
_KEEP_NOT = re.compile(r"\b(?:do\s+not|don't|must\s+not|should\s+not|without)\s+keep(?:ing)?\b|\bno\s+(?:alias|"
                       r"backwards?[- ]compatible)|\bremove\s+the\s+old\s+name", re.IGNORECASE)
_KEEP_OLD = re.compile(r"\bkeep(?:ing)?\s+(?:the\s+old|an?\s+(?:deprecated\s+)?alias|`?\w+`?\s+as\s+an?\s+)|"
                       r"\b(?:deprecated|backwards?[- ]compatible)\s+alias", re.IGNORECASE)
_REMOVE = re.compile(rf"\b(?:remove|delete|drop)\s+(?:(?:the|deprecated|unused|old)\s+)*"
                     rf"(?:(?:function|method|class|alias|helper|constant)\s+`?({_NAME})`?|`({_NAME})`)",
                     re.IGNORECASE)


@dataclass(frozen=True)
class Statement:
    kind: str  # "import" (the source must run), "exists" (the name must be defined), "gone" (it must not be),
    # "renamed" (`text` is "OLD NEW": NEW must be defined, unless neither is, as when a parameter was renamed)
    text: str  # the import statement, or the name

    @property
    def shown(self) -> str:
        return {"import": f"`{self.text}` works", "exists": f"`{self.text}` is defined",
                "renamed": f"`{self.text.split()[-1]}` is defined", "gone": f"`{self.text}` is gone"}[self.kind]


@dataclass(frozen=True)
class StatementVerdict:
    statement: Statement
    ok: bool | None  # None: not checked (a module did not import, or a package it needs is not here)
    detail: str


def statements(task: str, root: Path) -> tuple[Statement, ...]:
    """The statements about names the task makes, in order, at most `MAX_STATEMENTS`."""
    task = task[:MAX_TASK_CHARS]
    found: list[Statement] = []
    for match in _FROM_IMPORT.finditer(task):
        if _local(match.group(1), root) and not _SHOULD_FAIL.search(_sentence_after(task, match.end())):
            names = ", ".join(n.strip() for n in match.group(2).split(","))
            found.append(Statement("import", f"from {match.group(1)} import {names}"))
    for match in _TICKED_IMPORT.finditer(task):
        if _local(match.group(1), root) and not _SHOULD_FAIL.search(_sentence_after(task, match.end())):
            found.append(Statement("import", f"import {match.group(1)}"))
    renames = [(old.rsplit(".", 1)[-1], new) for old, new in _RENAME.findall(task) if _named(new)]
    added = [name for name in (*added_names(task), *_ADD.findall(task)) if _named(name)]
    found += [Statement("exists", name) for name in added]
    found += [Statement("renamed", f"{old} {new}") for old, new in renames if new not in added]
    kept = bool(_KEEP_OLD.search(task)) and not _KEEP_NOT.search(task)
    gone = [old for old, _ in renames if not kept] + [a or b for a, b in _REMOVE.findall(task)]
    found += [Statement("gone", name) for name in gone if name not in added and _named(name)]
    return tuple(dict.fromkeys(found))[:MAX_STATEMENTS]


def stated_imports(task: str) -> dict[str, str]:
    """{name: module} of the imports the task says must work (`from webcolors import name`)."""
    return {name.strip(): module for module, names in _FROM_IMPORT.findall(task[:MAX_TASK_CHARS])
            for name in names.split(",")}


def renames(task: str) -> dict[str, str]:
    """The names the task renames, new name to old ("rename `soft_str` to `soft_text`": soft_text -> soft_str)."""
    return {new: old.rsplit(".", 1)[-1] for old, new in _RENAME.findall(task[:MAX_TASK_CHARS]) if _named(new)}


def _named(name: str) -> bool:
    """Whether a word can be a name the task means (not a keyword or a builtin: "add `None` handling")."""
    return not keyword.iskeyword(name) and name not in _BUILTINS


def _sentence_after(task: str, at: int) -> str:
    end = re.search(r"[.;](?=\s|$)|\n\n", task[at:at + 240])
    return task[at:at + (end.start() if end else 240)]


def _local(dotted: str, root: Path) -> bool:
    """Whether a module's top package is the workspace's own (at the root or under `src/`)."""
    top = dotted.split(".", 1)[0]
    return any((base / f"{top}.py").is_file() or (base / top / "__init__.py").is_file() or (base / top).is_dir()
               for base in (root, root / "src"))


def script(found: tuple[Statement, ...], names: list[str], folders: list[str], local: list[str],
           exact: list[str] | None = None) -> str:
    """A Python program that checks `found` against the modules `names` (found from `folders`), printing a marked
    JSON line each. A name must be defined in one of `exact` (the modules of the files the task names; None: any of
    `names`), and gone from all of `names` (their packages' re-exports too); `local`: the workspace's top-level
    modules (an import failing for want of another is not judged; a module of the workspace that does not import,
    `cannot import name 'is_iso8601'`, fails them all)."""
    data = json.dumps({"statements": [[s.kind, s.text] for s in found], "modules": names, "folders": folders,
                       "exact": exact if exact else names, "local": local, "mark": MARK, "timeout": TIMEOUT_S})
    return _PROGRAM.replace("DATA", repr(data))


def verdicts(found: tuple[Statement, ...], output: str) -> list[StatementVerdict]:
    """The script's lines read back; a statement with no line (the program died) is not checked."""
    seen = {i: StatementVerdict(found[i], ok, detail)
            for i, (ok, detail) in marked_rows(output, MARK, len(found)).items()}
    return [seen.get(i, StatementVerdict(s, None, "not checked")) for i, s in enumerate(found)]


_PROGRAM = """\
import importlib, json, signal, sys
D = json.loads(DATA)
for f in reversed(D["folders"]):
    sys.path.insert(0, f)
def alarm(*_):
    raise TimeoutError("still running after %d s" % D["timeout"])
signal.signal(signal.SIGALRM, alarm)
signal.alarm(D["timeout"])
def say(i, ok, detail):
    print(D["mark"] + json.dumps({"i": i, "ok": ok, "detail": detail}), flush=True)
mods, problem, broken = [], None, False
for name in D["modules"]:
    try:
        mods.append(importlib.import_module(name))
    except BaseException as e:
        problem = "importing %s: %s: %s" % (name, type(e).__name__, str(e)[:300])
        broken = not isinstance(e, ModuleNotFoundError) or (getattr(e, "name", None) or "").split(".")[0] in D["local"]
        break
def where(name, among):
    for m in [m for m in mods if m.__name__ in among]:
        if name in vars(m):
            return m.__name__
        for v in list(vars(m).values()):
            if isinstance(v, type) and getattr(v, "__module__", "") == m.__name__ and name in vars(v):
                return "%s.%s" % (m.__name__, v.__name__)
    return None
def parameter(name):
    import inspect
    for m in mods:
        for v in list(vars(m).values()):
            for f in [v, *(vars(v).values() if isinstance(v, type) else ())]:
                try:
                    if callable(f) and name in inspect.signature(f).parameters:
                        return True
                except (TypeError, ValueError):
                    pass
    return False
for i, (kind, text) in enumerate(D["statements"]):
    if kind == "import":
        try:
            exec(text, {})
            say(i, True, "works")
        except ModuleNotFoundError as e:
            local = (getattr(e, "name", None) or "").split(".")[0] in D["local"]
            say(i, False if local else None, "%s: %s" % (type(e).__name__, e))
        except BaseException as e:
            say(i, False, "%s: %s" % (type(e).__name__, str(e)[:300]))
        continue
    if problem or not mods:  # the workspace's own code does not import: what it should define is not there
        say(i, False if broken else None, problem or "no module to look in")
        continue
    if kind == "renamed":
        old, new = text.split()
        found, before = where(new, D["exact"]), where(old, D["modules"])
        if found or before:
            say(i, found is not None, "defined in %s" % found if found else "not defined in %s; %s still is (in %s)"
                % (", ".join(D["exact"]), old, before))
        elif parameter(old) or parameter(new):
            say(i, None, "neither %s nor %s is a definition here" % (old, new))
        else:
            say(i, False, "%s is defined nowhere in %s (and %s is gone)" % (new, ", ".join(D["exact"]), old))
        continue
    found = where(text, D["exact"] if kind == "exists" else D["modules"])
    if kind == "exists":
        say(i, found is not None, "defined in %s" % found if found else "not defined in %s" % ", ".join(D["exact"]))
    else:
        say(i, found is None, "still defined in %s" % found if found else "gone")
signal.alarm(0)
"""

"""The task's own examples, checked beside the project's tests.

A user who writes "quantify(3, 'octopus') == '3 octopi'" or "ordinalize(13) returns '13rd' but it should be
'13th'" has stated a check. `examples(task)` finds such claims in the task's text: a Python call or subscript
followed at once by `== VALUE`, `should be|return|give VALUE`, `is|are True|False|None`, or `returns|raises ...`
and then, in the same sentence, `instead of VALUE` or `should be|return|give VALUE`; "A and B are False" holds of
both. VALUE is a Python literal or expression (compared with `==`), or else a bare word such as `1.2.3-rc.2`
(compared with the result's `str`). A sentence that says only what the code does now ("returns 'sheeps'") states
nothing to check.

`script(...)` is a Python program that imports the modules the task is about, evaluates each example there, and
prints one marked JSON line an example; the verifier runs it in the command sandbox (`verify.Verifier`) and
`verdicts(output)` reads it back. An example whose name is not defined is skipped, unless the task asks for that
name to be added ("Add a function quantify(...)"): then its absence is a failure. When a module does not import
(broken by the change, or the interpreter lacks what it needs), every example is skipped: the project's tests judge
that.
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

from cli_agent.contracts import dataclass

MAX_EXAMPLES = 8
MAX_EXPR_CHARS = 300
SENTENCE_CHARS = 240  # how far after "returns X" a correction ("instead of Y") is looked for
MAX_TASK_CHARS = 20_000  # of the task's text looked at
SCAN_BUDGET = 30_000  # characters scanned for expressions that do not close, before the search gives up
EXAMPLE_TIMEOUT_S = 10  # an example still running after this fails (the script's own alarm)
EXAMPLE_MEMORY = 2 << 30  # bytes of address space the examples may grow to past what the imports took
MARK = "cli-agent-example "

_START = re.compile(r"(?<![\w.'\"])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*(?=[(\[])")
_GAP = r"[`\s]*,?\s*"
_SAYS = r"should\s+(?:be|return|give)\s+(?:(?:a|an|the|just|only|empty|simply)\s+)*"
_EQUALS = re.compile(_GAP + r"==\s*")
_SHOULD = re.compile(_GAP + _SAYS)
_CONSTANT = re.compile(_GAP + r"(?:is|are|should\s+be)\s+(?=(?:True|False|None)\b)")
_NOW = re.compile(_GAP + r"(?:returns|gives|raises|is|evaluates\s+to)\b")
_LATER = re.compile(r"\binstead\s+of\s+|\b" + _SAYS)
_SENTENCE_END = re.compile(r"[.;](?=\s|$)")
_AND = re.compile(r"[`\s]*and\s+")
# "a function f(...)", "class C", and "Add f(...)" (the call written right after the verb: "Add sliding_window(n, seq)
# to toolz/itertoolz.py")
_ADDED = re.compile(r"\b(?:function|method|def)\s+`?([A-Za-z_]\w*)`?\s*\(|\bclass\s+`?([A-Z]\w*)"
                    r"|\b[Aa]dd\s+`?([A-Za-z_]\w*)`?\s*\(")


@dataclass(frozen=True)
class Example:
    expr: str  # a Python expression
    expected: str  # Python source compared with ==, or (literal False) the text the result's str must equal
    literal: bool = True


@dataclass(frozen=True)
class Verdict:
    example: Example
    ok: bool | None  # None: skipped (a name it uses is not defined, and the task does not add it)
    detail: str  # what it gave, or why it failed or was skipped


def examples(task: str) -> tuple[Example, ...]:
    """The checks the task states, in order, at most `MAX_EXAMPLES`."""
    task = task[:MAX_TASK_CHARS]
    found: list[Example] = []
    waiting: list[str] = []  # "A and B are False": A waits for B's value
    at, budget = 0, SCAN_BUDGET
    while len(found) < MAX_EXAMPLES and budget > 0:
        start = _START.search(task, at)
        if start is None:
            break
        end = _expression_end(task, start.start())
        expr = task[start.start():end] if end > 0 else ""
        if not expr or not _parses(expr):
            budget -= min(MAX_EXPR_CHARS, len(task) - start.start())
            at = start.end()
            continue
        value, after = _claim(task, end)
        if value is None:
            joined = _AND.match(task, end)
            waiting = [*waiting, expr] if joined else []
            at = joined.end() if joined else end
            continue
        found.extend(Example(e, *value) for e in (*waiting, expr))
        waiting = []
        at = after
    return tuple(found[:MAX_EXAMPLES])


def added_names(task: str) -> tuple[str, ...]:
    """The names the task asks to add: a function or method written with its parameters ("Add a function
    quantify(count, word)", "Add quantify(count, word) to ..."), or a class."""
    return tuple(dict.fromkeys(a or b or c for a, b, c in _ADDED.findall(task)))


def _claim(task: str, at: int) -> tuple[tuple[str, bool] | None, int]:
    """What the text right after an expression says it should give: ((source, literal), where the claim ends)."""
    for pattern in (_EQUALS, _SHOULD, _CONSTANT):
        match = pattern.match(task, at)
        if match:
            return _value(task, match.end())
    now = _NOW.match(task, at)
    if now is None:
        return None, at
    stop = _SENTENCE_END.search(task, now.end(), now.end() + SENTENCE_CHARS)
    later = _LATER.search(task, now.end(), stop.start() if stop else now.end() + SENTENCE_CHARS)
    return _value(task, later.end()) if later is not None else (None, at)


def _value(task: str, at: int) -> tuple[tuple[str, bool] | None, int]:
    """The value written at `at`: a string, a bracketed or called expression, or a bare word (its text)."""
    while at < len(task) and task[at] == "`":
        at += 1
    if at >= len(task):
        return None, at
    if task[at] in "'\"":
        end = _string_end(task, at)
    elif task[at] in "([{" or _START.match(task, at):
        end = _expression_end(task, at)
    else:
        word = re.match(r"[^\s`]+", task[at:])
        token = word.group().rstrip(".,;:") if word else ""
        while token.endswith(")") and token.count(")") > token.count("("):
            token = token[:-1]
        if not token:
            return None, at
        literal = _parses(token) and (token in ("True", "False", "None") or not re.fullmatch(r"[A-Za-z_]\w*", token))
        return (token, literal), at + len(token)
    if end <= 0 or not _parses(task[at:end]):
        return None, at
    return (task[at:end], True), end


def _expression_end(text: str, at: int) -> int:
    """The end of the call or subscript chain starting at `at` (`Version.parse('1.2')[0].x()`), or -1."""
    name = _START.match(text, at) if text[at] not in "([{" else None
    i = name.end() if name else at
    limit = min(len(text), at + MAX_EXPR_CHARS)
    closed = False
    while i < limit:
        if text[i] in "([{":
            i = _bracket_end(text, i, limit)
            if i < 0:
                return -1
            closed = True
        elif text[i] == "." and closed:
            attribute = re.match(r"\.[A-Za-z_]\w*", text[i:])
            if attribute is None:
                break
            i += attribute.end()
            closed = False
        else:
            break
    return i if closed else -1


def _bracket_end(text: str, at: int, limit: int) -> int:
    pairs = {"(": ")", "[": "]", "{": "}"}
    stack: list[str] = []
    i = at
    while i < limit:
        char = text[i]
        if char in "'\"":
            i = _string_end(text, i)
            if i < 0:
                return -1
            continue
        if char in pairs:
            stack.append(pairs[char])
        elif char in ")]}":
            if not stack or stack.pop() != char:
                return -1
            if not stack:
                return i + 1
        i += 1
    return -1


def _string_end(text: str, at: int) -> int:
    quote = text[at]
    i = at + 1
    while i < len(text) and i - at <= MAX_EXPR_CHARS:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == quote:
            return i + 1
        if text[i] == "\n":
            return -1
        i += 1
    return -1


def _parses(source: str) -> bool:
    try:
        ast.parse(source, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError):  # a claim nested past the parser's depth: skipped
        return False
    return True


def modules(root: Path, paths: list[str]) -> tuple[list[str], list[str]]:
    """The modules to import for `paths` (workspace-relative `.py` files) and the folders to put on `sys.path`
    first: each file's package chain is followed up through `__init__.py` files; the top package comes before
    its modules."""
    names: list[str] = []
    folders: list[str] = []
    for rel in paths:
        parts = list(Path(rel).with_suffix("").parts)
        if not parts or not rel.endswith(".py"):
            continue
        if parts[-1] == "__init__":
            parts.pop()
        depth = 1
        while depth < len(parts) and (root.joinpath(*parts[:len(parts) - depth], "__init__.py")).is_file():
            depth += 1
        dotted = parts[len(parts) - depth:]
        if not dotted or not all(p.isidentifier() for p in dotted):
            continue
        folder = "/".join(parts[:len(parts) - depth]) or "."
        for name in (dotted[0], ".".join(dotted)):
            if name not in names:
                names.append(name)
        if folder not in folders:
            folders.append(folder)
    return names, folders


def script(found: tuple[Example, ...], names: list[str], folders: list[str], added: tuple[str, ...]) -> str:
    """A Python program that checks `found` with the names of `names` imported, printing a marked JSON line each."""
    data = json.dumps({"examples": [[e.expr, e.expected, e.literal] for e in found], "modules": names,
                       "folders": folders, "added": list(added), "mark": MARK, "timeout": EXAMPLE_TIMEOUT_S,
                       "memory": EXAMPLE_MEMORY})
    return _PROGRAM.replace("DATA", repr(data))


def marked_rows(output: str, mark: str, count: int) -> dict[int, tuple[bool | None, str]]:
    """The rows a checking program printed, each a line `mark` + JSON `{"i", "ok", "detail"}`, by index (below
    `count`); a line that is not one is skipped, and a detail is cut at 400 characters."""
    rows: dict[int, tuple[bool | None, str]] = {}
    for line in output.splitlines():
        if not line.startswith(mark):
            continue
        try:
            row = json.loads(line[len(mark):])
            index, ok, detail = int(row["i"]), row["ok"], str(row["detail"])
        except (ValueError, KeyError, TypeError):
            continue
        if 0 <= index < count and ok in (True, False, None):
            rows[index] = (ok, detail[:400])
    return rows


def verdicts(found: tuple[Example, ...], output: str) -> list[Verdict]:
    """The script's lines read back; an example with no line (the program died) failed with the output's end."""
    seen = {i: Verdict(found[i], ok, detail) for i, (ok, detail) in marked_rows(output, MARK, len(found)).items()}
    tail = " ".join(output.strip().splitlines()[-3:])[-300:] or "no output"
    return [seen.get(i, Verdict(e, False, f"not checked: {tail}")) for i, e in enumerate(found)]


_PROGRAM = """\
import importlib, json, signal, sys
D = json.loads(DATA)
for f in reversed(D["folders"]):
    sys.path.insert(0, f)
ns, problem = {}, None
for name in D["modules"]:
    try:
        m = importlib.import_module(name)
    except BaseException as e:
        problem = "importing %s: %s: %s" % (name, type(e).__name__, e)
        break
    ns.setdefault(name.split(".")[0], sys.modules[name.split(".")[0]])
    ns.update({k: v for k, v in vars(m).items() if not k.startswith("__")})
def bound_memory():  # what an example may allocate, past what the imports took (RLIMIT_AS)
    try:
        import resource
        with open("/proc/self/statm") as f:
            used = int(f.read().split()[0]) * resource.getpagesize()
        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        want = used + D["memory"]
        resource.setrlimit(resource.RLIMIT_AS, (want if hard == resource.RLIM_INFINITY else min(want, hard), hard))
    except Exception:
        pass
bound_memory()
def alarm(*_):
    raise TimeoutError("still running after %d s" % D["timeout"])
signal.signal(signal.SIGALRM, alarm)
def say(i, ok, detail):
    print(D["mark"] + json.dumps({"i": i, "ok": ok, "detail": detail}), flush=True)
for i, (expr, expected, literal) in enumerate(D["examples"]):
    if problem:  # the project's tests judge a module that does not import; here it may be the interpreter's
        say(i, None, problem)
        continue
    signal.alarm(D["timeout"])
    try:
        want = eval(expected, dict(ns)) if literal else expected
    except BaseException as e:
        signal.alarm(0)
        say(i, None, "the expected value: %s: %s" % (type(e).__name__, str(e)[:300]))
        continue
    try:
        got = eval(expr, dict(ns))
        shown = repr(got) if literal else str(got)
        ok = bool(got == want) if literal else str(got) == want
        say(i, ok, "gave %s" % shown[:300])
    except NameError as e:
        missing = getattr(e, "name", None)
        say(i, False if missing in D["added"] else None, "NameError: %s" % e)
    except (MemoryError, RecursionError) as e:  # too big or too deep to check here: skipped, the tests judge
        say(i, None, "not checked: %s" % type(e).__name__)
    except BaseException as e:
        say(i, False, "raised %s: %s" % (type(e).__name__, str(e)[:300]))
    finally:
        signal.alarm(0)
"""

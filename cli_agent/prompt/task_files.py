"""The right lines first: the files a task names, shown to the model before its first step.

    brief = task_brief(task, workspace, budget_tokens=1500)   # None when the task names no file here
    brief.text                                                # a user message: each file's relevant region
    brief.paths                                               # the files shown (they count as read)

A task names a file by its path (`src/app.py`, `app.py`), an `@file` mention, a dotted module name that resolves to
a file (`pkg.mod` -> `pkg/mod.py`), or a function or class name (`slugify()`, `` `Parser` ``) defined in a file of
the workspace. In a file the task names, a word of the task that is defined there names that definition too ("Fix
is_compatible in semver/version.py"): a word after "Fix", words with an underscore, calls, then the rest, functions
before classes; then the functions of that file those call (the bug the task shows in `ordinalize(13)` is in the
`ordinal` it calls). For a named function the region is its definition, for a long class its head and its methods'
`def` lines; otherwise the start of the file. Every region carries line numbers (`NUMBER| text`) so an edit can
point at them, and the whole brief stays within a token budget (about four characters a token). The search is
bounded: at most `_MAX_FILES` files of at most `_MAX_BYTES` each are looked into for definitions, in the workspace
listing's order (ignored files skipped).
"""

from __future__ import annotations

import ast
import functools
import re
import warnings
from typing import TYPE_CHECKING

from cli_agent.contracts import ToolError, dataclass

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

__all__ = ["Place", "named_files", "task_brief"]

_MAX_FILES = 400
_MAX_BYTES = 256 * 1024
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_CALLEE_LINES = 30  # a longer function called is left to read_file
_WHOLE_CLASS = 40  # a longer class is shown as its head and its methods' def lines
_SOURCE = (".py", ".js", ".ts", ".tsx", ".jsx", ".go", ".rs", ".rb", ".java", ".c", ".h", ".cpp", ".md", ".toml",
           ".json", ".yaml", ".yml", ".txt", ".cfg", ".ini", ".sh", ".html", ".css")
# starts only where a run of path characters starts: tried at every letter of a long word it would be quadratic
_PATHISH = re.compile(r"@?(?<![A-Za-z0-9_.\-/])([A-Za-z0-9_.\-/]+\.[A-Za-z0-9]{1,5})\b")
_MENTION = re.compile(r"@([A-Za-z0-9_.\-/]+)")
_NAME = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)(?:\(\))?`|\b([A-Za-z_][A-Za-z0-9_]*)\(\)")
_DOTTED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+)\b")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\()?")
_TARGET = re.compile(r"\b(?:[Ff]ix|[Cc]hange|[Cc]orrect|[Uu]pdate|[Rr]epair)\s+`?([A-Za-z_][A-Za-z0-9_]*)"
                     r"|\bthe\s+`?([A-Za-z_][A-Za-z0-9_]*)`?\s+class\b")
_CALL = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)\(")
_DOTTED_CALL = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:\.[A-Za-z_]\w*)*\.([A-Za-z_]\w*)\(")  # `pkg.func(`
_HEAD = re.compile(r"^[ \t]*(?:async\s+def|def|class|function|func|fn)\s+([A-Za-z_][A-Za-z0-9_]*)", re.M)


@dataclass(frozen=True)
class TaskBrief:
    text: str
    paths: tuple[str, ...]
    places: tuple[Place, ...] = ()  # the definitions shown, in the order shown


@dataclass(frozen=True)
class Place:
    """A definition the brief shows: `whole` when all its lines are shown (else its head and methods, or cut)."""

    path: str
    name: str
    first: int  # 1-based, decorators included
    last: int
    whole: bool


def task_brief(task: str, workspace: Workspace, *, budget_tokens: int = 1500) -> TaskBrief | None:
    named = named_files(task, workspace)
    names = [a or b for a, b in _NAME.findall(task)]
    if not named:  # no file named: what the task asks to fix, and the functions it calls, are looked for by name
        names += [name for name in _asked(task) if name not in names]
    texts = {path: _read(workspace, path) for path in named}  # each file read once, for its names and its region
    wanted: dict[str, list[str]] = {}
    for path, text in texts.items():
        defs = _defined_in(text, task)
        wanted[path] = defs + _callees(text, defs) if text is not None else defs
    known = {m.group(1) for text in texts.values() if text is not None for m in _HEAD.finditer(text)}
    names = [name for name in names if name not in known]  # defined in a named file: not looked for elsewhere
    if names:
        packages = {package for package, _ in _DOTTED_CALL.findall(task)}
        found_in = _definitions(workspace, names)
        # `pkg.func(...)`: the `func` of the package `pkg` first, not one of the same name elsewhere
        for path in sorted(found_in, key=lambda p: not packages & set(p.removesuffix(".py").split("/"))):
            wanted.setdefault(path, []).extend(found_in[path])
    if not wanted:
        return None
    budget = budget_tokens * 4
    parts, shown, places = [], [], []
    for path, defs in list(wanted.items())[:6]:
        text = texts[path] if path in texts else _read(workspace, path)
        block, where = _region(path, text, list(dict.fromkeys(defs)), budget // max(1, len(wanted)))
        if block:
            parts.append(block)
            shown.append(path)
            places += where
    if not parts:
        return None
    text = ("The task names these files. Their relevant lines, as NUMBER| text (the numbers are not part of the "
            "file; read_file shows more):\n\n" + "\n\n".join(parts))
    return TaskBrief(text[:budget + 400], tuple(shown), tuple(places))


def _is_file(workspace: Workspace, path: str) -> bool:
    try:
        return workspace.exists(path) and not workspace.is_dir(path)
    except ToolError:
        return False


def named_files(task: str, workspace: Workspace) -> list[str]:
    """The workspace's files the task names (a path, `@path`, a dotted module, a file name found once), at most
    6, workspace-relative, in order."""
    out: list[str] = []
    candidates = [m for m in _MENTION.findall(task)] + _PATHISH.findall(task)
    candidates += [d.replace(".", "/") + ".py" for d in _DOTTED.findall(task) if not d.endswith(_SOURCE)]
    for raw in candidates:
        path = raw.rstrip(".,:;)")
        if path in out or len(out) >= 6:
            continue
        if _is_file(workspace, path):
            out.append(workspace.relative(path))
        elif "/" not in path and path.endswith(_SOURCE):  # a bare file name: the one file of that name
            matches = [p for p in _listing(workspace) if p.rsplit("/", 1)[-1] == path]
            if len(matches) == 1:
                out.append(matches[0])
    return list(dict.fromkeys(out))


def _listing(workspace: Workspace) -> list[str]:
    try:
        return [p for p in workspace.walk(".", limit=4000) if not p.endswith("/")]
    except ToolError:
        return []


def _defined_in(text: str | None, task: str) -> list[str]:
    """The definitions in a file's `text` that words of the task name, at most 2 (each costs prompt tokens, and the
    functions they call come next, `_callees`), best first:
    - a word the task asks to fix or change ("Fix match in"), or a class it adds to ("to the Markup class");
    - a word with an underscore (`is_compatible`, `__getitem__`);
    - a word followed by `(` (`parse(`), only when nothing above is defined here: an example's `parse(` is seldom
      the place;
    - when none of these is defined here, any other word of at least 3 characters, or that word without its last
      one or two letters ("pluralized" names `pluralize`).
    Within each, functions before classes."""
    strong: dict[str, int] = {}
    weak: dict[str, None] = {}
    targets = {a or b for a, b in _TARGET.findall(task)}
    for match in _WORD.finditer(_PATHISH.sub(" ", task)):  # `__init__` of a path names no definition
        word = match.group(0).rstrip("(")
        if word in targets:
            strong[word] = 0
        elif "_" in word and word.strip("_"):
            strong.setdefault(word, 1)
        elif match.group(1):
            strong.setdefault(word, 2)
        elif len(word) >= 3:
            weak[word] = None
    if text is None:
        return []
    is_class = {m.group(1): m.group(0).lstrip().startswith("class") for m in _HEAD.finditer(text)}
    stems = {w[:-cut]: None for w in weak for cut in (1, 2) if len(w) - cut >= 4 and w[:-cut] not in weak}
    found: list[str] = []
    for words in ([w for w in strong if strong[w] < 2], [w for w in strong if strong[w] == 2], [*weak, *stems]):
        if found:
            break
        ranked = sorted(words, key=lambda w: strong.get(w, 3))  # stable: the task's order within a rank
        found = [w for w in ranked if is_class.get(w) is False] + [w for w in ranked if is_class.get(w)]
    return found[:2]


def _asked(task: str) -> list[str]:
    """The names a task that names no file asks about: the function of a dotted call (`pkg.func(...)` is `func`), a
    word it asks to fix or change ("Fix mean so ..."), a word with an underscore, a call (`mean([1, 2, 3])`); not a
    dunder (`__init__` is defined everywhere)."""
    targets = {a or b for a, b in _TARGET.findall(task)}
    out: dict[str, None] = {name: None for _, name in _DOTTED_CALL.findall(task) if not name.startswith("__")}
    for match in _WORD.finditer(_PATHISH.sub(" ", task)):
        word = match.group(0).rstrip("(")
        if (word in targets or "_" in word.strip("_") or match.group(1)) and not word.startswith("__"):
            out[word] = None
    return list(out)


def _callees(text: str, defs: list[str]) -> list[str]:
    """Functions of the same file that the functions `defs` call (`name(`, `self.name(`), shorter than `_CALLEE_LINES`
    lines, private ones (`_name`) first, then in the order called; at most 3 definitions in all: a bug the task
    shows in `ordinalize(13)` is often in the `ordinal` it calls."""
    lines = text.split("\n")
    functions = {m.group(1) for m in _HEAD.finditer(text) if not m.group(0).lstrip().startswith("class")}
    out: list[str] = []
    for name in defs:
        if name not in functions:
            continue
        span = _definition_span(lines, name, text)
        if span is None:
            continue
        for call in _CALL.finditer("\n".join(lines[span[0]:span[1]])):  # the body, without the def line
            callee = call.group(1)
            if callee in functions and callee not in defs and callee not in out and not callee.startswith("__"):
                called = _definition_span(lines, callee, text)
                if called is not None and called[1] - called[0] < _CALLEE_LINES:
                    out.append(callee)
    out.sort(key=lambda name: not name.startswith("_"))
    return out[:max(0, 3 - len(defs))]


def _definitions(workspace: Workspace, names: list[str]) -> dict[str, list[str]]:
    """{path: [names defined there]} for `def NAME`/`class NAME`/`function NAME` in source files."""
    pattern = re.compile(r"^\s*(?:async\s+def|def|class|function|func|fn)\s+(" + "|".join(map(re.escape, names))
                         + r")\b", re.M)
    found: dict[str, list[str]] = {}
    files = [p for p in _listing(workspace) if p.endswith(_SOURCE[:11])][:_MAX_FILES]
    for path in files:
        try:
            text = workspace.read_bytes(path, limit=_MAX_BYTES).decode("utf-8", errors="replace")
        except ToolError:
            continue
        for match in pattern.finditer(text):
            found.setdefault(path, [])
            if match.group(1) not in found[path]:
                found[path].append(match.group(1))
    return found


def _read(workspace: Workspace, path: str) -> str | None:
    """A file's text (its first `_MAX_BYTES`); None when it cannot be read or is binary."""
    try:
        data = workspace.read_bytes(path, limit=_MAX_BYTES)
    except ToolError:
        return None
    return None if b"\0" in data[:8192] else data.decode("utf-8", errors="replace").replace("\r\n", "\n")


def _region(path: str, text: str | None, defs: list[str], budget: int) -> tuple[str, list[Place]]:
    """The numbered lines shown of a file (its definitions `defs`, else its start) and the definitions shown."""
    if text is None:
        return "", []
    lines = text.split("\n")
    if lines and not lines[-1]:
        lines.pop()
    found = [(name, span) for name in defs if (span := _definition_span(lines, name, text)) is not None]
    spans = [span for _, span in found] or [(1, len(lines))]
    out: list[str] = []
    places: list[Place] = []
    used = 0
    for i, (first, last) in enumerate(spans):
        if out:
            out.append("...")
        width = len(str(last))
        rows = _outline(lines, first, last, text)
        for n in rows:
            line = f"{n:>{width}}| {lines[n - 1]}"
            if used + len(line) + 1 > budget:
                out.append(f"... (cut at line {n - 1}; read_file {path} start_line={n} for more)")
                break
            out.append(line)
            used += len(line) + 1
        else:
            if found:
                places.append(Place(path, found[i][0], first, last, whole=len(rows) == last - first + 1))
            continue
        break
    if not out:
        return "", []
    if not found:  # the file's start: the top-level definitions it shows whole
        shown = len([row for row in out if not row.startswith("...")])
        places = [Place(path, name, a, b, whole=True) for name, (a, b) in _python_index(text)[0].items()
                  if b <= shown and not lines[a - 1][:1].isspace()]
    return f"--- {path} ({len(lines)} lines)\n" + "\n".join(out), places


def _outline(lines: list[str], first: int, last: int, text: str) -> list[int]:
    """The 1-based line numbers to show of lines `first`..`last`: all of them, or for a Python class longer than
    `_WHOLE_CLASS` lines its head (to the first line of its body) and the `def` line of each method."""
    methods = _python_index(text)[1].get(first) if last - first >= _WHOLE_CLASS else None
    if not methods:
        return list(range(first, last + 1))
    head = first
    while head < last and not lines[head - 1].rstrip().endswith(":"):
        head += 1
    body = next((n for n in range(head + 1, last + 1) if lines[n - 1].strip()), head)
    return [*range(first, body + 1), *(n for n in methods if n > body)]


@functools.lru_cache(maxsize=8)
def _python_index(text: str) -> tuple[dict[str, tuple[int, int]], dict[int, list[int]]]:
    """For Python source: {name: (first, last)} of each function and class (the first of a name, outer before
    inner; decorators included), and {a class's first line: its methods' `def` lines}. Empty when it does not
    parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}, {}
    spans: dict[str, tuple[int, int]] = {}
    methods: dict[int, list[int]] = {}
    for node in ast.walk(tree):
        if isinstance(node, _DEFINITIONS):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            spans.setdefault(node.name, (first, node.end_lineno or node.lineno))
            if isinstance(node, ast.ClassDef):
                methods[first] = [n.lineno for n in node.body if isinstance(n, _DEFINITIONS[:2])]
    return spans, methods


def _definition_span(lines: list[str], name: str, text: str) -> tuple[int, int] | None:
    """1-based (first, last) line of `name`'s definition: in Python as `ast` has it, otherwise its line to the next
    line indented no deeper; None when it is not defined there."""
    span = _python_index(text)[0].get(name)
    if span is not None:
        return span
    head = re.compile(r"^(\s*)(?:async\s+def|def|class|function|func|fn)\s+" + re.escape(name) + r"\b")
    for i, line in enumerate(lines):
        match = head.match(line)
        if not match:
            continue
        indent = len(match.group(1))
        end = i + 1
        while end < len(lines) and (not lines[end].strip() or len(lines[end]) - len(lines[end].lstrip()) > indent
                                    or lines[end].lstrip().startswith((")", "]", "}"))):
            end += 1
        while end > i + 1 and not lines[end - 1].strip():
            end -= 1
        top = i
        while top > 0 and lines[top - 1].lstrip().startswith("@"):
            top -= 1
        return top + 1, end
    return None

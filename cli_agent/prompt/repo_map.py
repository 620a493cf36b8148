"""The repository map: where the task's words are defined, with line numbers, shown before the first step.

    outline = Outline(workspace)                          # one per session: it keeps each file's definitions
    found = repo_map(task, outline, budget_tokens=400)    # None when nothing in the outline matches the task
    found.text, found.paths                               # the message; the files it gives line numbers of

The outline is every function, class and method of the workspace's source files: Python read with `ast`,
JavaScript, TypeScript, Go and Rust with tree-sitter's grammars. Each definition is ranked by the task's words (a
definition whose whole name the task says counts most, then each part of a snake_case or camelCase name, then the
words of its file's path, then a file the task names), as Aider's repository map ranks by what the chat mentions.
The best ones are listed by file, as `FIRST-LAST  def name(args)`, within the token budget (about four characters
a token). Test files are left out unless the task speaks of tests.

Bounded: at most `MAX_FILES` files of at most `MAX_BYTES` each (the workspace listing's order, ignored files
skipped), and at most `TIME_S` seconds of parsing; a file that does not parse, or is nested past the parser's
depth (a `MemoryError` or `RecursionError` in `ast`), is skipped, the others are mapped, and the map names it.
An `Outline` keeps each file's definitions by (path, size, mtime), so a session re-parses only what changed.
"""

from __future__ import annotations

import ast
import functools
import importlib
import math
import re
import time
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import ToolError, dataclass
from cli_agent.prompt.project_tests import is_test_path

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

__all__ = ["Outline"]

MAX_FILES = 1500
MAX_BYTES = 512 * 1024
TIME_S = 1.0
SIGNATURE_MAX = 100
MAX_ENTRIES = 15
_GRAMMARS = {".js": ("tree_sitter_javascript", "language"), ".jsx": ("tree_sitter_javascript", "language"),
             ".mjs": ("tree_sitter_javascript", "language"), ".ts": ("tree_sitter_typescript", "language_typescript"),
             ".tsx": ("tree_sitter_typescript", "language_tsx"), ".go": ("tree_sitter_go", "language"),
             ".rs": ("tree_sitter_rust", "language")}
# tree-sitter node types that define something, and the child that names them
_TS_DEFINITIONS = {"function_declaration", "generator_function_declaration", "class_declaration", "method_definition",
                   "interface_declaration", "type_alias_declaration", "enum_declaration", "method_declaration",
                   "type_spec", "function_item", "struct_item", "enum_item", "trait_item", "impl_item", "mod_item",
                   "abstract_class_declaration"}
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_MARKED = re.compile(r"(?<![A-Za-z0-9_])([A-Za-z_][A-Za-z0-9_]*)(?:\(|`)")  # from a word's start: linear time
CALLED_SCORE = 100.0  # a definition the task calls or names in backticks: above any score of words alone
_CALLED = re.compile(r"(?<![\w.])(?:[A-Za-z_]\w{0,79}\.){0,4}([A-Za-z_]\w{0,79})\("
                     r"|`([A-Za-z_]\w{0,79}(?:\.[A-Za-z_]\w{0,79}){0,4})`")
_CALLED_TASK_CHARS = 20_000  # of the task's text looked at for them
_NOT_CALLS = frozenset({"print", "len", "str", "int", "float", "list", "dict", "set", "tuple", "repr", "range",
                        "isinstance", "type"})
_OPENER = re.compile(r"(?:^|[.!?:;]\s+|\n)\s*([A-Z][a-z]+)\b(?![_(`.])")
_STOP = frozenset(re.split(r"\s+", """the and for with that this from into when then than not are was were has
have had does did but should would could must can will return returns returned instead should make makes fix bug
add file code function method class test tests value values string list dict none true false use using get set new
old""".strip()))


class _TooDeep(Exception):
    """A Python file nested past the parser's depth (a MemoryError or RecursionError in `ast`)."""


@dataclass(frozen=True)
class Symbol:
    path: str
    name: str  # qualified: `Class.method`
    line: int
    end: int
    signature: str  # the definition's first line, stripped and cut


class Outline:
    """The definitions of a workspace's source files, re-read only for files whose size or mtime changed."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._files: dict[str, tuple[tuple[int, int], tuple[Symbol, ...]]] = {}
        self.unparsed: set[str] = set()  # Python files nested past the parser's depth: no outline, and the map says so

    def symbols(self, *, deadline: float | None = None) -> list[Symbol]:
        """Every definition (bounded; see the module's docstring)."""
        deadline = deadline if deadline is not None else time.monotonic() + TIME_S
        try:
            listing = [p for p in self.workspace.walk(".", limit=MAX_FILES * 4) if not p.endswith("/")]
        except ToolError:
            return []
        files = [p for p in listing if p.endswith(".py") or p[p.rfind("."):] in _GRAMMARS][:MAX_FILES]
        symbols: list[Symbol] = []
        for path in files:
            if time.monotonic() > deadline:
                break
            symbols.extend(self._file(path))
        return symbols

    def _file(self, path: str) -> tuple[Symbol, ...]:
        try:
            data, st = self.workspace.read(path, limit=MAX_BYTES + 1)
        except (ToolError, OSError):
            return ()
        key = (st.st_size, st.st_mtime_ns)
        kept = self._files.get(path)
        if kept is not None and kept[0] == key:
            return kept[1]
        if len(data) > MAX_BYTES or b"\0" in data[:8192]:
            found: tuple[Symbol, ...] = ()
        else:
            text = data.decode("utf-8", errors="replace")
            try:
                found = tuple(_python(path, text) if path.endswith(".py") else _tree_sitter(path, data, text))
            except _TooDeep:
                found = ()
                self.unparsed.add(path)
        self._files[path] = (key, found)
        return found


@dataclass(frozen=True)
class RepoMap:
    text: str  # a user message: the definitions by file, with their line numbers
    paths: tuple[str, ...]  # the files it gives line numbers of


def repo_map(task: str, outline: Outline, *, budget_tokens: int = 400) -> RepoMap | None:
    words = _task_words(task)
    called = called_names(task)
    if not words and not called:
        return None
    wants_tests = bool(re.search(r"\btests?\b|\btest_", task, re.I))
    scored = []
    symbols = [s for s in outline.symbols() if wants_tests or not is_test_path(s.path)]
    seen: dict[str, int] = {}
    for symbol in symbols:
        own = symbol.name.rsplit(".", 1)[-1].lower()
        seen[own] = seen.get(own, 0) + 1
    for symbol in symbols:
        score = _score(symbol, words, task, seen) + (CALLED_SCORE if _own(symbol) in called else 0)
        if score >= 2:
            scored.append((score, symbol))
    if not scored:
        return None
    scored.sort(key=lambda item: (-item[0], item[1].path, item[1].line))
    budget = budget_tokens * 4
    chosen: dict[str, list[Symbol]] = {}
    used = 0
    for _, symbol in scored[:MAX_ENTRIES]:
        line = _entry(symbol)
        cost = len(line) + 1 + (0 if symbol.path in chosen else len(symbol.path) + 1)
        if used + cost > budget:
            break
        chosen.setdefault(symbol.path, []).append(symbol)
        used += cost
    if not chosen:
        return None
    blocks = [path + "\n" + "\n".join(_entry(s) for s in sorted(found, key=lambda s: s.line))
              for path, found in chosen.items()]
    unparsed = sorted(outline.unparsed)[:5]
    note = f"\n(not outlined, nested too deeply for Python's parser: {', '.join(unparsed)})" if unparsed else ""
    return RepoMap("Where the task's words are defined (FIRST-LAST line numbers; read_file with start_line/end_line "
                   "shows them):\n" + "\n".join(blocks) + note, tuple(chosen))


def called_names(task: str) -> frozenset[str]:
    """The names the task writes as a call (`add(2, 3)`) or alone in backticks (`` `take_nth` ``,
    `` `Version.parse` ``: `parse`), however short: a definition of one ranks first (`CALLED_SCORE`)."""
    found = set()
    for match in _CALLED.finditer(task[:_CALLED_TASK_CHARS]):
        name = match.group(1) or match.group(2).rsplit(".", 1)[-1]
        if name and name not in _NOT_CALLS:
            found.add(name)
    return frozenset(found)


def _own(symbol: Symbol) -> str:
    return symbol.name.rsplit(".", 1)[-1]


def _entry(symbol: Symbol) -> str:
    owner = symbol.name.rpartition(".")[0]
    return f"  {symbol.line}-{symbol.end}  {symbol.signature}" + (f"  (in {owner})" if owner else "")


def _parts(name: str) -> list[str]:
    """`parse_Config` -> [parse, config]; `escapeSilent` -> [escape, silent]."""
    out = []
    for chunk in re.split(r"[_.\-/]+", name):
        out += [p.lower() for p in re.findall(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])", chunk)]
    return [p for p in out if len(p) >= 3]


def _task_words(task: str) -> dict[str, int]:
    """The task's words, lowercased: an identifier (snake_case, camelCase, `name(`, `` `name` ``) weighs 3, a plain
    word 1, a part of an identifier 0 (it counts only towards parts of names). Stop words are left out, and so is a
    plain word that opens a sentence: the verb of a request ("Create hello.py ...") says what to do, not where (it
    would rank a `create` method anywhere)."""
    words: dict[str, int] = {}
    marked = {m.group(1) for m in _MARKED.finditer(task)}
    openers = {m.group(1) for m in _OPENER.finditer(task)} - marked
    for token in _WORD.findall(task):
        lowered = token.lower()
        if token in openers:
            continue
        if len(lowered) >= 3 and lowered not in _STOP:
            named = "_" in token.strip("_") or token[1:] != token[1:].lower() or token in marked
            words[lowered] = max(words.get(lowered, 0), 3 if named else 1)
        for part in _parts(token):
            if part not in _STOP:
                words.setdefault(part, 0)  # a part alone: it matches parts of names, never a whole name
    return words


def _score(symbol: Symbol, words: dict[str, int], task: str, seen: dict[str, int]) -> float:
    """How much the task points at `symbol`; `seen`: how many definitions have each name (a name defined in many
    places, such as `run`, says less about where to look)."""
    own = symbol.name.rsplit(".", 1)[-1]
    score = 0.0
    if own.lower() in words and len(own) >= 3:
        score += 10 * words[own.lower()] / math.log2(1 + seen.get(own.lower(), 1))
    score += sum(2 if words[part] else 1 for part in set(_parts(own)) if part in words)
    if score and symbol.path in task:
        score += 5
    score += 0.5 * sum(1 for part in set(_parts(symbol.path.rsplit(".", 1)[0])) if part in words) if score else 0
    return score


def _python(path: str, text: str) -> list[Symbol]:
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    except (RecursionError, MemoryError):  # nested past the parser's depth: no outline, and a note
        raise _TooDeep from None
    lines = text.splitlines()
    out: list[Symbol] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                first = child.lineno
                signature = lines[first - 1].strip() if first <= len(lines) else child.name
                out.append(Symbol(path, prefix + child.name, first, child.end_lineno or first,
                                  signature[:SIGNATURE_MAX]))
                visit(child, prefix + child.name + ".")

    visit(tree, "")
    return out


def _tree_sitter(path: str, data: bytes, text: str) -> list[Symbol]:
    parser = _parser(path[path.rfind("."):])
    if parser is None:
        return []
    try:
        tree = parser.parse(data)
    except Exception:  # a grammar's failure on one file skips that file
        return []
    lines = text.splitlines()
    out: list[Symbol] = []
    stack: list[tuple[Any, str]] = [(tree.root_node, "")]
    while stack:
        node, prefix = stack.pop()
        for child in reversed(node.children):
            if child.type in _TS_DEFINITIONS:
                name_node = child.child_by_field_name("name") or child.child_by_field_name("type")
                name = name_node.text.decode("utf-8", "replace") if name_node is not None and name_node.text else ""
                if name:
                    first, last = child.start_point[0] + 1, child.end_point[0] + 1
                    signature = lines[first - 1].strip() if first <= len(lines) else name
                    out.append(Symbol(path, prefix + name, first, last, signature[:SIGNATURE_MAX]))
                    stack.append((child, prefix + name + "."))
                    continue
            stack.append((child, prefix))
    out.sort(key=lambda s: s.line)
    return out


@functools.cache
def _parser(suffix: str) -> Any:
    """A tree-sitter parser for the suffix's language; None without the grammar package."""
    module_name, attribute = _GRAMMARS[suffix]
    try:
        import tree_sitter  # deferred: tree-sitter, only when such a file is outlined

        grammar = getattr(importlib.import_module(module_name), attribute)()
        return tree_sitter.Parser(tree_sitter.Language(grammar))
    except Exception:  # no grammar package, or one this tree-sitter can't load: that language has no outline
        return None

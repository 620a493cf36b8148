"""Where a whole-definition candidate rewrites (`Targets`): the ranked definitions in turn, not the same wrong place
again and again.

The first target is what the task brief found (the function the task calls or names, with the short functions of its
file it calls). A task that says which definition to fix ("Fix parse_timezone in iso8601/iso8601.py") has that one
alone as its first target, and what the brief found as its second: shown a short helper beside it, a small model
rewrote the helper (`merge-with-iterable`'s `_get_factory`, `negative-offset-minutes`' `FixedOffset`). After
`PER_TARGET` rewrites of one target fail (tested and failing, a repeat, or nothing that could be placed or changed),
the next is asked for: the functions the definitions just tried call (`callees`, in the order called), found by
parsing their bodies, in their own file or in the module of the package they are imported from (`from pkg.helpers
import clip`, `from . import helpers` then `helpers.clip(...)`), and a method's calls of the methods of its own
class (`self.clip(...)`, `cls.clip(...)`, `Version.clip(...)`). The bug a task shows in `pkg.total(...)` is often
one call down, in another file. Each callee is a target of its own, its own callees queued after it, at most
`MAX_TARGETS` in all; when none is left, the search goes round again from the first (each target keeps its `Memory`,
so a version already tried is still a repeat). A task that adds or renames a name keeps its places: what it asks for
is written beside them, not found one call down. The search is bounded: at most `MAX_CALLS` calls looked at in a
definition, a callee longer than `MAX_LINES` lines left out.
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Collection, Iterator, Sequence
from typing import TYPE_CHECKING

from cli_agent.agent.judge.rewrite_memory import Memory
from cli_agent.agent.judge.rewrite_reply import tree_of
from cli_agent.contracts import ToolError, dataclass
from cli_agent.prompt import Place

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

PER_TARGET = 3  # failed rewrites of one target before the next is asked for
MAX_TARGETS = 6  # targets one candidate goes through, the first included
MAX_CALLS = 40  # calls looked at in one definition
MAX_LINES = 120  # a longer callee is not a target: its rewrite would cost a small model minutes
_MAX_BYTES = 256 * 1024
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_FIX = re.compile(r"\b(?:fix|repair|correct)\s+`?(?:[A-Za-z_]\w*\.)*([A-Za-z_]\w*)`?(?:\(\))?(?=[\s.,;:!`]|$)",
                  re.IGNORECASE)


def fixed_names(prompt: str) -> set[str]:
    """The names the task says to fix (`Fix parse_timezone in ...`, `fix Version.match`); words that name no
    definition (`Fix the bug`) are sorted out by the places they must match."""
    return set(_FIX.findall(prompt))


@dataclass(frozen=True)
class _Target:
    places: tuple[Place, ...]
    caller: str  # the function that calls it ("" for the first target)
    memory: Memory


class Targets:
    """The targets of one candidate's rewrites, the current one first (`places`, `memory`, `note`)."""

    def __init__(self, places: Sequence[Place], workspace: Workspace, *, search: bool = True,
                 fixed: Collection[str] = ()) -> None:
        self._workspace = workspace
        self._search = search  # False: the places stay the target (a task that adds or renames a name)
        self._queue = [_Target(tuple(places), "", Memory())]
        named = tuple(p for p in places if p.name in fixed)
        if search and named and len(named) < len(places):  # the definition the task says to fix, alone first
            self._queue.insert(0, _Target(named, "", Memory()))
        self._expanded: set[int] = set()
        self._at = 0
        self._shown = {0}  # the targets whose places a request has shown
        self._failed = 0

    @property
    def places(self) -> tuple[Place, ...]:
        return self._queue[self._at].places

    @property
    def placed(self) -> tuple[Place, ...]:
        """Where a rewrite's definitions go: the places of the other targets shown so far first (a reply that brings
        back the caller replaces the caller, in its own file), the current target's last (a new function goes after
        them). A definition no request has shown is not replaced from what the model imagines it is
        (`negative-offset-minutes`: asked for `parse_timezone` alone, it wrote a `FixedOffset` class of its own, which
        replaced the real one, and the tests could not import it)."""
        others = [p for i, t in enumerate(self._queue) if i != self._at and i in self._shown for p in t.places]
        return (*others, *self.places)

    @property
    def memory(self) -> Memory:
        return self._queue[self._at].memory

    def note(self) -> str:
        """What the request says of a target found one call down ("" for the first)."""
        target = self._queue[self._at]
        if not target.caller:
            return ""
        names = " and ".join(f"`{p.name}`" for p in target.places)
        return (f"(Rewrites of `{target.caller}` did not make the checks pass. {names}, which `{target.caller}` "
                "calls, may hold the bug: rewrite it.)")

    def failed(self) -> bool:
        """One more rewrite of the current target failed; True when that moves the search to another target."""
        self._failed += 1
        if self._failed < PER_TARGET or not self._search:
            return False
        self._failed = 0
        self._expand(self._at)
        if len(self._queue) == 1:
            return False
        self._at = (self._at + 1) % len(self._queue)
        self._shown.add(self._at)
        return True

    def _expand(self, at: int) -> None:
        """Queue the callees of target `at`'s functions that no target holds yet."""
        if at in self._expanded:
            return
        self._expanded.add(at)
        held = {(p.path, p.name) for t in self._queue for p in t.places}
        for caller, place in callees(self._queue[at].places, self._workspace):
            if len(self._queue) >= MAX_TARGETS:
                return
            if (place.path, place.name) not in held:
                held.add((place.path, place.name))
                self._queue.append(_Target((place,), caller, Memory()))


def callees(places: Sequence[Place], workspace: Workspace) -> Iterator[tuple[str, Place]]:
    """(caller, callee) for the package's functions that the whole functions of `places` call, in the order
    called: defined in the caller's file, or in the workspace module the name (or the module of `module.name(...)`)
    is imported from; for a method, also the methods of its class it calls through `self`, `cls` or the class."""
    for place in places:
        source = _source(workspace, place.path)
        tree = tree_of(source) if source is not None and place.path.endswith(".py") else None
        if tree is None or not place.whole:
            continue
        found_in = next(((n, owner) for owner in _scopes(tree) for n in owner.body if isinstance(n, _FUNCTIONS)
                         and n.name == place.name
                         and min([n.lineno, *(d.lineno for d in n.decorator_list)]) == place.first), None)
        if found_in is None:
            continue
        node, owner = found_in
        imports = _imports(tree, place.path)
        calls = sorted((c for c in ast.walk(node) if isinstance(c, ast.Call)), key=lambda c: (c.lineno, c.col_offset))
        for call in calls[:MAX_CALLS]:
            found = (_method(call.func, owner, place.path) if isinstance(owner, ast.ClassDef) else None) or \
                _resolved(call.func, place.path, tree, imports, workspace)
            if found is not None:
                yield place.name, found


def _scopes(tree: ast.Module) -> Iterator[ast.Module | ast.ClassDef]:
    """The module and its classes (nested ones too): where a function of a place may be defined."""
    yield tree
    yield from (n for n in ast.walk(tree) if isinstance(n, ast.ClassDef))


def _method(func: ast.expr, owner: ast.ClassDef, path: str) -> Place | None:
    """The method of `owner` that `self.name`, `cls.name` or `Owner.name` calls, when it is not too long."""
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls", owner.name)):
        return None
    return _defined(owner, path, func.attr)


def _resolved(func: ast.expr, path: str, tree: ast.Module, imports: dict[str, tuple[str, str]],
              workspace: Workspace) -> Place | None:
    """The function a call's `func` names: `name` defined in this file or imported from a workspace module,
    `module.name` of a workspace module imported; None for anything else (a builtin, a method, a library's)."""
    if isinstance(func, ast.Name):
        own = _defined(tree, path, func.id)
        if own is not None:
            return own
        module, name = imports.get(func.id, ("", ""))
    elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in imports:
        module, name = imports[func.value.id]
        module, name = (f"{module}.{name}" if name else module), func.attr
    else:
        return None
    return _found(module, name, workspace) if module and name else None


def _found(module: str, name: str, workspace: Workspace, hops: int = 1) -> Place | None:
    """The function `name` of a workspace module, or of the module that module imports it from (a package's
    `__init__.py` that re-exports it: `hops` more)."""
    for file in _module_files(module, workspace):
        source = _source(workspace, file)
        tree = tree_of(source) if source is not None else None
        found = _defined(tree, file, name)
        if found is None and tree is not None and hops:
            again = _imports(tree, file).get(name)
            found = _found(again[0], again[1], workspace, hops - 1) if again and again[1] else None
        if found is not None:
            return found
    return None


def _defined(tree: ast.Module | ast.ClassDef | None, path: str, name: str) -> Place | None:
    """The function `name` defined at the top of a parsed file (or a class), as a whole `Place`, when it is not
    too long."""
    for node in tree.body if tree is not None else ():
        if isinstance(node, _FUNCTIONS) and node.name == name:
            first, last = min([node.lineno, *(d.lineno for d in node.decorator_list)]), node.end_lineno or node.lineno
            return Place(path, name, first, last, whole=True) if last - first < MAX_LINES else None
    return None


def _imports(tree: ast.Module, path: str) -> dict[str, tuple[str, str]]:
    """{local name: (dotted module, name in it)} of the file's top-level imports; ("pkg.mod", "") for a module
    (`import pkg.mod as m`). A relative import is made absolute from the file's own folder."""
    package = posixpath.dirname(path).replace("/", ".")
    out: dict[str, tuple[str, str]] = {}
    for node in tree.body:
        if isinstance(node, ast.Import):
            for alias in node.names:
                out[alias.asname or alias.name.split(".")[0]] = (alias.name if alias.asname else
                                                                 alias.name.split(".")[0], "")
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".") if package else []
            if node.level:
                base = base[:len(base) - (node.level - 1)] if node.level - 1 <= len(base) else []
                module = ".".join([*base, *([node.module] if node.module else [])])
            else:
                module = node.module or ""
            for alias in node.names:
                out[alias.asname or alias.name] = (module, alias.name)
    return out


def _module_files(dotted: str, workspace: Workspace) -> list[str]:
    """The workspace files a dotted module may be (`pkg/mod.py`, `pkg/mod/__init__.py`, also under `src/`)."""
    parts = [p for p in dotted.split(".") if p]
    if not parts:
        return []
    rel = "/".join(parts)
    out = []
    for base in ("", "src/"):
        for candidate in (f"{base}{rel}.py", f"{base}{rel}/__init__.py"):
            if _source(workspace, candidate) is not None:
                out.append(candidate)
    return out


def _source(workspace: Workspace, path: str) -> str | None:
    try:
        if not workspace.exists(path) or workspace.is_dir(path):
            return None
        return workspace.read_bytes(path, limit=_MAX_BYTES).decode("utf-8", errors="replace")
    except ToolError:
        return None

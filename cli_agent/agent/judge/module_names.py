"""Module-level names in a whole-definition rewrite: `__all__`, a table, a constant.

A rewrite may return a module-level assignment (`NAME = ...`, `NAME: T = ...`) of a name already assigned at the
top level of a file it was shown or of that file's package `__init__.py` (`public_files`), when the task names it
or it is the `__all__` the request showed (`assignable`); it replaces that assignment, as a function replaces a
function (`assignment_calls`, through `replace_lines`). When the task adds or renames a public name, the request
shows each of those files' `__all__` (`shown_all`), the list a new name must join; a renamed definition that lands
is listed there under its new name (`renamed_in_all`), and the module's other uses of the old name follow it
(`renamed_uses`). A new definition the task says its package exports (`from pkg import name` works) joins the
package `__init__.py`'s import of its module (`reexports`), and the `__all__` the task says lists it (`listed`).
`in_order` orders the line-based calls so that the lines each was planned with still hold.
"""

from __future__ import annotations

import ast
import io
import posixpath
import re
import tokenize
import uuid
from collections.abc import Collection, Sequence
from typing import TYPE_CHECKING

from cli_agent.agent.judge.proof.statements import stated_imports
from cli_agent.contracts import ToolCall

if TYPE_CHECKING:
    from cli_agent.prompt import Place


ALL_CHARS = 800  # the longest `__all__` a rewrite request shows



def rewrite_call(tool: str, **arguments: object) -> ToolCall:
    """A tool call a rewrite plans (`replace_definition`, `insert_text`, `replace_lines`), with an id of its own."""
    return ToolCall(id=f"rewrite-{uuid.uuid4().hex[:8]}", name=tool, arguments=dict(arguments))


def lines_call(path: str, first: int, last: int, new: str) -> ToolCall:
    """The `replace_lines` call that puts `new` in place of lines `first`..`last` of `path`."""
    return rewrite_call("replace_lines", path=path, start_line=first, end_line=last, new=new)

def _parsed(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def public_files(paths: Sequence[str]) -> list[str]:
    """The files shown and their packages' `__init__.py`, each once (which exist is the caller's to find)."""
    found = list(dict.fromkeys(paths))
    for path in paths:
        init = posixpath.join(posixpath.dirname(path), "__init__.py")
        if posixpath.dirname(path) and init not in found:
            found.append(init)
    return found


def assigned(source: str) -> dict[str, tuple[int, int]]:
    """The names a module assigns at its top level, once each, with their lines (first, last; 1-based)."""
    tree = _parsed(source)
    found: dict[str, tuple[int, int]] = {}
    repeated: set[str] = set()
    for node in tree.body if tree is not None else ():
        name = _target(node)
        if name is not None:
            if name in found:
                repeated.add(name)
            found[name] = (node.lineno, node.end_lineno or node.lineno)
    return {name: lines for name, lines in found.items() if name not in repeated}


def _target(node: ast.stmt) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
        return node.target.id
    return None


def shown_all(sources: dict[str, str]) -> list[str]:
    """Each file's `__all__` as it reads now, as a fenced block headed by its path; not one over `ALL_CHARS`
    (more-itertools' 150 names: some 700 tokens more in each request, and more than a small model copies back;
    a new name the task says is listed there is appended for it, `listed`)."""
    blocks = []
    for path, source in sources.items():
        lines = assigned(source).get("__all__")
        text = "\n".join(source.split("\n")[lines[0] - 1:lines[1]]) if lines else ""
        if text and len(text) <= ALL_CHARS:
            blocks.append(f"```python\n# {path}\n{text}\n```")
    return blocks


def assignable(task: str, public: bool) -> set[str]:
    """The module-level names a rewrite may replace: those the task names, and `__all__` when the rewrite request
    shows it (`public`: the task adds or renames a name). A table the model was never shown is not rewritten from
    what it imagines (`UNCOUNTABLES = {"fish", "equipment"}` over the module's whole list)."""
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", task)) | ({"__all__"} if public else set())


def alias_of(node: ast.stmt) -> str | None:
    """The name `node` makes an alias of another (`name = other`), or None."""
    if (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Name)):
        return node.targets[0].id
    return None


def assignment_calls(code: str, sources: dict[str, str], taken: set[str],
                     allowed: Collection[str] | None = None) -> list[ToolCall]:
    """A `replace_lines` call for each top-level assignment of `code` whose name a file of `sources` assigns (the
    first such file), unless the name is `taken` (already placed otherwise) or not `allowed` (None: any); the same
    assignment is no call."""
    tree = _parsed(code)
    calls: list[ToolCall] = []
    where = {path: assigned(source) for path, source in sources.items()}
    for node in tree.body if tree is not None else ():
        name = _target(node)
        if name is None or name in taken or (allowed is not None and name not in allowed):
            continue
        path = next((p for p, names in where.items() if name in names), None)
        if path is None:
            continue
        first, last = where[path][name]
        new = ast.get_source_segment(code, node) or ast.unparse(node)
        old = "\n".join(sources[path].split("\n")[first - 1:last])
        if _same(old, new):
            continue
        calls.append(lines_call(path, first, last, new))
    return calls


def renamed_in_all(path: str, source: str, old: str, new: str) -> ToolCall | None:
    """The call that renames `old` to `new` in the module's `__all__` (a list or tuple of strings), None when it does
    not list `old`: a renamed definition stays exported under its new name."""
    lines = assigned(source).get("__all__")
    tree = _parsed(source)
    node = next((n for n in tree.body if _target(n) == "__all__"), None) if tree is not None and lines else None
    value = getattr(node, "value", None)
    if lines is None or not isinstance(value, ast.List | ast.Tuple):
        return None
    names = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
    if old not in names or new in names:
        return None
    text = "\n".join(source.split("\n")[lines[0] - 1:lines[1]])
    changed = re.sub(rf"(['\"]){re.escape(old)}\1", lambda m: f"{m.group(1)}{new}{m.group(1)}", text, count=1)
    return lines_call(path, lines[0], lines[1], changed)


def renamed_uses(path: str, source: str, old: str, new: str, place: Place, calls: Sequence[ToolCall]
                 ) -> list[ToolCall]:
    """The calls that rename the module's other uses of `old` (code, not strings or comments; not `x.old`) to
    `new`, a line each: a renamed function still called under its old name elsewhere in its module fails there.
    The lines of the definition replaced (`place`) and of the other line-based `calls` for the file are left out."""
    taken = {n for c in calls if c.name == "replace_lines" and (c.arguments or {}).get("path") == path
             for n in range(int((c.arguments or {})["start_line"]), int((c.arguments or {})["end_line"]) + 1)}
    taken |= set(range(place.first, place.last + 1))
    rows: dict[int, list[int]] = {}
    previous = ""
    try:
        for token in tokenize.generate_tokens(io.StringIO(source).readline):
            if token.type == tokenize.NAME and token.string == old and previous != "." and token.start[0] not in taken:
                rows.setdefault(token.start[0], []).append(token.start[1])
            previous = token.string if token.type == tokenize.OP else ""
    except (tokenize.TokenError, SyntaxError):
        return []
    lines = source.split("\n")
    out = []
    for row, columns in sorted(rows.items()):
        line = lines[row - 1]
        for column in sorted(columns, reverse=True):
            line = line[:column] + new + line[column + len(old):]
        out.append(lines_call(path, row, row, line))
    return out


def exports(calls: Sequence[ToolCall], sources: dict[str, str], task: str) -> list[ToolCall]:
    """What the new definitions `calls` insert need besides their place, when the task says so: the package's import
    of them (`reexports`) and their names in an `__all__` (`listed`)."""
    return [*reexports(calls, sources, task), *listed(calls, sources, task)]


def _inserted(call: ToolCall) -> list[str]:
    """The names of the definitions an `insert_text` call puts at a module's top level."""
    tree = _parsed(str((call.arguments or {}).get("text", "")).strip("\n")) if call.name == "insert_text" else None
    return [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            ] if tree is not None else []


def listed(calls: Sequence[ToolCall], sources: dict[str, str], task: str) -> list[ToolCall]:
    """When the task says a new definition is listed in `__all__`: the call that lists the names `calls` insert in
    their module's `__all__` (the package `__init__.py`'s when the task says "package's", or the module has none),
    unless the reply gives that `__all__` itself or it lists them already. A long `__all__` (more-itertools' has 150
    names) is more than a small model can copy back."""
    if "__all__" not in task:
        return []
    package_first = re.search(r"\bpackage'?s?\s+`?__all__", task) is not None
    wanted: dict[str, list[str]] = {}
    for call in calls:
        path = str((call.arguments or {}).get("path", ""))
        init = posixpath.join(posixpath.dirname(path), "__init__.py")
        target = next((t for t in ((init, path) if package_first else (path, init))
                       if t in sources and "__all__" in assigned(sources[t])), None)
        if target is not None:
            wanted.setdefault(target, []).extend(_inserted(call))
    out = []
    for target, names in wanted.items():
        first, last = assigned(sources[target])["__all__"]
        if names and not any(c.name == "replace_lines" and (c.arguments or {}).get("path") == target
                             and int((c.arguments or {}).get("start_line") or 0) <= last
                             and int((c.arguments or {}).get("end_line") or 0) >= first for c in calls):
            appended = _appended(sources[target].split("\n")[first - 1:last], names)
            out += [lines_call(target, first, last, appended)] if appended else []
    return out


def _appended(lines: list[str], names: list[str]) -> str:
    """An `__all__` assignment's lines with `names` (those it lacks) added before its closing bracket, in its own
    quotes and layout; "" when it lacks none or is not a literal list or tuple of strings."""
    tree = _parsed("\n".join(lines))
    value = getattr(tree.body[0], "value", None) if tree is not None and tree.body else None
    if not isinstance(value, ast.List | ast.Tuple):
        return ""
    have = {e.value for e in value.elts if isinstance(e, ast.Constant)}
    names = [n for n in dict.fromkeys(names) if n not in have]
    if not names:
        return ""
    text = "\n".join(lines).rstrip()
    quote = "'" if re.search(r"'\w", text) and not re.search(r'"\w', text) else '"'
    if len(lines) > 1 and lines[-1].strip() in ("]", ")"):  # one name a line
        indent = lines[-2][:len(lines[-2]) - len(lines[-2].lstrip())] or "    "
        return "\n".join([*lines[:-1], *(f"{indent}{quote}{n}{quote}," for n in names), lines[-1]])
    body = text[:-1].rstrip()
    joiner = "" if body.endswith(("[", "(")) else " " if body.endswith(",") else ", "
    return body + joiner + ", ".join(f"{quote}{n}{quote}" for n in names) + text[-1]


def reexports(calls: Sequence[ToolCall], sources: dict[str, str], task: str) -> list[ToolCall]:
    """For each new module-level definition a call inserts into `pkg/mod.py` whose name the task says is imported
    from `pkg` (`from pkg import name` works): the call that adds it to the import of `pkg/__init__.py` that names
    that module's others (`from .mod import (a, b)`, `from pkg.mod import a`), which a rewrite cannot change. None
    for a star import, or a name already there."""
    exported = stated_imports(task)
    out = []
    for call in calls:
        folder, module = posixpath.split(str((call.arguments or {}).get("path", "")))
        init = posixpath.join(folder, "__init__.py")
        if init not in sources or module == "__init__.py":
            continue
        for name in _inserted(call):
            package = exported.get(name, "").replace(".", "/")
            if package and f"/{folder}/".endswith(f"/{package}/"):
                added = _imported_too(init, sources[init], module.removesuffix(".py"), exported[name], name)
                out += [added] if added is not None else []
    return out


def _imported_too(path: str, source: str, module: str, package: str, name: str) -> ToolCall | None:
    """The call that adds `name` to the `from` import of `module` in a package's `__init__.py` (`source`)."""
    tree = _parsed(source)
    for node in tree.body if tree is not None else ():
        if not isinstance(node, ast.ImportFrom) or (node.level, node.module) not in ((1, module),
                                                                                   (0, f"{package}.{module}")):
            continue
        if any(alias.name in ("*", name) for alias in node.names):
            return None
        lines = source.split("\n")[node.lineno - 1:node.end_lineno]
        if len(lines) > 1 and lines[-1].strip() == ")":  # one name a line: another line before the parenthesis
            indent = lines[-2][:len(lines[-2]) - len(lines[-2].lstrip())]
            lines.insert(len(lines) - 1, f"{indent}{name},")
        else:  # at the statement's end, before a comment after it
            end = lines[-1].encode()[:node.end_col_offset].decode(errors="replace")
            head = end[:-1].rstrip().rstrip(",") + f", {name})" if end.endswith(")") else f"{end}, {name}"
            lines[-1] = head + lines[-1][len(end):]
        return lines_call(path, node.lineno, node.end_lineno or node.lineno, "\n".join(lines))
    return None


def _same(old: str, new: str) -> bool:
    before, after = _parsed(old), _parsed(new)
    return before is not None and after is not None and ast.dump(before) == ast.dump(after)


def in_order(calls: list[ToolCall]) -> list[ToolCall]:
    """The line-based calls (`replace_lines`, `insert_text`), lowest in each file first, before the ones that find
    their place by name: each leaves the lines above it as they were."""
    def line(call: ToolCall) -> float:
        arguments = call.arguments or {}
        if call.name == "replace_lines":
            return float(arguments.get("start_line") or 0)
        return float(arguments.get("after_line") or 0) + 0.5  # below the line it follows, above the next
    placed = [c for c in calls if c.name in ("replace_lines", "insert_text")]
    return sorted(placed, key=line, reverse=True) + [c for c in calls if c not in placed]

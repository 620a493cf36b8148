"""Python edits that would no longer parse: refused before approval, with the error and the lines around it.

A small model often writes a body one level too shallow or leaves a block empty; the file then fails at import and
the task with it, while the run looks done. So a planned change to a `.py` file that parsed before (or a new one) is
parsed first (`ast`, no code run), and one that would not parse goes back to the model as a failed call, the file
untouched. A file that was already broken is left to the model, so that a fix in several steps stays possible.

A change that parses may still leave code that can never run: a "fix" that puts a `return` above the buggy line
and leaves that line in place passes the tests and hides the bug. `unreachable_by` names such code in the functions
the change touched (code after a `return`, `raise`, `break` or `continue` in the same block), when the change
added it; it is a warning, shown with the change and sent to the model with its result.
"""

from __future__ import annotations

import ast
import warnings

from cli_agent.contracts import Change

MAX_BYTES = 2 << 20  # larger files are not parsed (bounded cost: ~10 ms a 100 KB file)
_AROUND = 2  # lines shown each side of the error
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ENDS = {ast.Return: "return", ast.Raise: "raise", ast.Break: "break", ast.Continue: "continue"}


def broken_by(change: Change) -> str | None:
    """Why `change` leaves a Python file unparseable (one paragraph for the model), or None."""
    if not change.path.endswith(".py") or change.after is None:
        return None
    error = _new_error(change.before, change.after)
    if error is None:
        return None
    line = error.lineno or 0
    lines = change.after.decode("utf-8", errors="replace").splitlines()
    first, last = max(1, line - _AROUND), min(len(lines), line + _AROUND)
    shown = "\n".join(f"{n}| {lines[n - 1]}" for n in range(first, last + 1))
    what = f"{type(error).__name__}: {error.msg} (line {line})"
    quotes = (" A string that ends early often means a double quote inside a JSON string that was not written as "
              '\\" (or use single quotes in the code).' if "unterminated string" in error.msg else "")
    return (f"this change would leave {change.path} unable to run: {what}; nothing was changed. The lines as they "
            f"would be:\n{shown}\nFix the call (keep the indentation of the code around it) and try again.{quotes}")


def still_parses(before: str, after: str) -> bool:
    """Whether an edit of Python source leaves it parseable, as `broken_by` judges it (a text over `MAX_BYTES`
    characters is over `MAX_BYTES` bytes too: not judged, and not copied to find that out)."""
    if len(before) > MAX_BYTES or len(after) > MAX_BYTES:
        return True
    return _new_error(before.encode("utf-8", "surrogateescape"), after.encode("utf-8", "surrogateescape")) is None


def parses(source: str) -> bool:
    """Whether Python source parses (a text over `MAX_BYTES` is not judged: True)."""
    return len(source) > MAX_BYTES or _error(source.encode("utf-8", "surrogateescape")) is None


def _new_error(before: bytes | None, after: bytes) -> SyntaxError | None:
    """The syntax error an edit brings into Python source; None when `after` parses, when either side is too large
    to judge, and when `before` did not parse either (a fix in several steps stays possible)."""
    if len(after) > MAX_BYTES or (before is not None and len(before) > MAX_BYTES):
        return None
    error = _error(after)
    if error is None or (before is not None and _error(before) is not None):
        return None
    return error


def _error(source: bytes) -> SyntaxError | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # invalid escape sequences and the like are not errors
            ast.parse(source)
    except SyntaxError as exc:
        return exc
    except (ValueError, RecursionError, MemoryError):  # NUL bytes, absurd nesting: not ours to judge
        return None
    return None


def unreachable_by(change: Change) -> str | None:
    """The code `change` leaves unreachable in the Python functions it touched, as one sentence for the model and
    the change's panel; None when it leaves none (or the file is too large to judge, or does not parse)."""
    if not change.path.endswith(".py") or change.after is None or len(change.after) > MAX_BYTES \
            or (change.before is not None and len(change.before) > MAX_BYTES):
        return None
    after = _functions(change.after)
    before = _functions(change.before) if change.before is not None else {}
    found = []
    for name, (text, dead) in after.items():
        was_text, was_dead = before.get(name, ("", []))
        if text != was_text and len(dead) > len(was_dead):
            first, last, end, line = dead[len(was_dead)]  # the first run the change added, as near as counts say
            where = f"line {first}" if first == last else f"lines {first}-{last}"
            found.append(f"{where} of {name}() can never run (after the {end} on line {line})")
    if not found:
        return None
    return (f"{change.path}: {'; '.join(found[:3])}. If the code after it was the bug, change or remove that code "
            "instead of returning above it.")


def _functions(source: bytes) -> dict[str, tuple[str, list[tuple[int, int, str, int]]]]:
    """{qualified name: (its source, its unreachable runs: first line, last line, what ends the block and on which
    line)} of each function in `source`; {} when it does not parse."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return {}
    lines = source.decode("utf-8", errors="replace").splitlines()
    out: dict[str, tuple[str, list[tuple[int, int, str, int]]]] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, _FUNCTIONS):
                name = f"{prefix}{child.name}"
                first = min([child.lineno, *(d.lineno for d in child.decorator_list)])
                text = "\n".join(lines[first - 1:child.end_lineno or child.lineno])
                out.setdefault(name, (text, _dead_runs(child.body)))
                visit(child, f"{name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            elif not isinstance(child, ast.expr):
                visit(child, prefix)

    visit(tree, "")
    return out


def _dead_runs(body: list[ast.stmt]) -> list[tuple[int, int, str, int]]:
    """The runs of statements after a block's `return`/`raise`/`break`/`continue`, in this block and the blocks
    nested in it (not in nested functions or classes: those are judged on their own)."""
    runs = []
    for index, statement in enumerate(body):
        end = _ENDS.get(type(statement))
        if end is not None and index + 1 < len(body):
            rest = body[index + 1:]
            runs.append((rest[0].lineno, rest[-1].end_lineno or rest[-1].lineno, f"`{end}`", statement.lineno))
            break
        if isinstance(statement, (*_FUNCTIONS, ast.ClassDef)):
            continue
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            for block in _blocks(getattr(statement, field, None)):
                runs += _dead_runs(block)
    return runs


def _blocks(value: object) -> list[list[ast.stmt]]:
    """The statement lists of a field: a body itself, or the bodies of its handlers or match cases."""
    if not isinstance(value, list) or not value:
        return []
    if isinstance(value[0], ast.stmt):
        return [value]
    return [item.body for item in value if isinstance(getattr(item, "body", None), list)]

"""Python edits that would no longer parse: refused before approval, with the error and the lines around it.

A small model often writes a body one level too shallow or leaves a block empty; the file then fails at import and
the task with it, while the run looks done. So a planned change to a `.py` file that parsed before (or a new one) is
parsed first (`ast`, no code run), and one that would not parse goes back to the model as a failed call, the file
untouched. A file that was already broken is left to the model, so that a fix in several steps stays possible.
"""

from __future__ import annotations

import ast
import warnings

from cli_agent.contracts.change import Change

__all__ = ["MAX_BYTES", "broken_by", "parses", "still_parses"]

MAX_BYTES = 2 << 20  # larger files are not parsed (bounded cost: ~10 ms a 100 KB file)
_AROUND = 2  # lines shown each side of the error


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

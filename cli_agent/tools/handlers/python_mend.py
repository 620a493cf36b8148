"""Two slips a small model makes in the Python it writes, mended only where that is what makes the file parse.

    body, what = mended(before, lambda b: head + b + tail, body)   # what == "" when nothing was mended

- **Quotes.** A model that must write code inside a JSON string avoids `\\"` and writes `'` instead, often for one
  end of a string only (`'{}{}\\".format(n)`). Every quote of `new` as `"` (or every one as `'`) is tried.
- **Colons.** `if x == 1` / `else` opening a block (the next line indented deeper) without its `:`.

A mend is taken only when the edit as written would not parse and the mended one does, judged as the syntax guard
judges (`still_parses`: a file too large, or one broken before, is never mended); the first of the tries that parses
wins: colons, then quotes (all `"`, then all `'`), then both. The caller says what was mended, so the change's
summary shows it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from cli_agent.tools.handlers.syntax_guard import parses, still_parses

_OPENER = re.compile(r"^[ \t]*(?:if|elif|else|for|while|def|class|try|except|finally|with|async[ \t]+(?:def|for|with))"
                     r"\b[^#]*$")


def mended(before: str, build: Callable[[str], str], body: str) -> tuple[str, str]:
    """`body`, or the first mended reading of it that makes `build(body)` parse where `body` does not, with what was
    mended ("" when nothing was)."""
    if still_parses(before, build(body)):  # also when `before` did not parse, or is too large: never mended
        return body, ""
    for fixed, what in _tries(body):  # `before` parses: only each try's result needs parsing
        if fixed != body and parses(build(fixed)):
            return fixed, what
    return body, ""


def _tries(body: str) -> list[tuple[str, str]]:
    out = [(_with_colons(body), "missing colons added")]
    if "'" in body or '"' in body:
        for quote in ('"', "'"):
            unified = body.replace("'" if quote == '"' else '"', quote)
            out += [(unified, f"quotes written as {quote}"),
                    (_with_colons(unified), f"quotes written as {quote} and missing colons added")]
    return out


def _with_colons(body: str) -> str:
    """`body` with `:` after each line that opens a block (the next non-blank line indented deeper) and lacks it."""
    rows = body.split("\n")
    for i, row in enumerate(rows):
        stripped = row.rstrip()
        if not _OPENER.match(stripped) or stripped.endswith((":", "\\", ",", "(", "[", "{")):
            continue
        following = next((r for r in rows[i + 1:] if r.strip()), None)
        if following is not None and _width(following) > _width(row):
            rows[i] = stripped + ":"
    return "\n".join(rows)


def _width(row: str) -> int:
    return len(row) - len(row.lstrip())

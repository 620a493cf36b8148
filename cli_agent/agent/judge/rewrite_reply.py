"""The Python a rewrite's reply holds (`reply_code`), and a parse of it shared by the rewrite's steps (`tree_of`)."""

from __future__ import annotations

import ast
import functools
import re
import textwrap

_FENCE = re.compile(r"```[ \t]*(?:python|py)?[ \t]*\n(.*?)(?:```|\Z)", re.S)
_DEFINITION_START = re.compile(r"^\s*(?:async\s+def|def|class)\s|^\s*@")


@functools.lru_cache(maxsize=16)
def tree_of(source: str) -> ast.Module | None:
    """`source` parsed, once for all the places in it, and a reply's code once for finding and placing it (None
    when it does not parse)."""
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def reply_code(text: str) -> str | None:
    """The Python a reply holds: its first fenced block that parses, else the whole reply if it parses, else the
    complete definitions before the one a reply cut short (at `MAX_REPLY_TOKENS`) was writing."""
    blocks = [m.group(1) for m in _FENCE.finditer(text)]
    for block in [*blocks, text, *(_complete_part(b) for b in blocks[:1])]:
        code = textwrap.dedent(block).strip("\n")
        if code and tree_of(code) is not None:
            return code
    return None


def _complete_part(block: str) -> str:
    """A block without its last definition (the one being written when the reply was cut), "" when that leaves
    none: everything before the last line that starts a `def`, `class` or decorator."""
    lines = block.rstrip().split("\n")
    starts = [i for i, line in enumerate(lines) if _DEFINITION_START.match(line)]
    return "\n".join(lines[:starts[-1]]) if len(starts) > 1 else ""

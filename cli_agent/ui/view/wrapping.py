"""Plain text fitted to a terminal's width: each line wrapped between words, its continuation lines under its own
text, never back at column 0 (`cli-agent sandbox`, `/undo list`, the REPL's one-line errors)."""

from __future__ import annotations

import re
import textwrap

__all__ = ["fit_lines"]

_LEAD = re.compile(r" *(?:-> |[a-z]+: +)?")


def fit_lines(text: str, width: int) -> str:
    """`text` with each line wrapped between words to `width` (a word longer than that, a path, is cut at the
    width). A continuation line goes under the words after a leading `-> ` or label (`env:   `), else two columns
    in from the line's own indent."""
    out: list[str] = []
    for line in text.split("\n"):
        lead = _LEAD.match(line)
        under = len(lead.group(0)) if lead and lead.group(0).strip() else len(line) - len(line.lstrip()) + 2
        out.append(textwrap.fill(line, max(width - 1, 30), subsequent_indent=" " * under, break_long_words=True,
                                 break_on_hyphens=False) or line)
    return "\n".join(out)

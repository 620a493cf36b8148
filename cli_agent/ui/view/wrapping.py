"""Plain text fitted to a terminal's width: each line wrapped between words, its continuation lines under its own
text, never back at column 0 (`cli-agent sandbox`, `/undo list`, the REPL's one-line errors)."""

from __future__ import annotations

import re
import textwrap

__all__ = ["fit_lines"]

_LEAD = re.compile(r" *(?:-> |[a-z]+: +)?")


class _PathWrapper(textwrap.TextWrapper):
    """A word longer than a line, a path, is split after one of its `/` (between entries, never inside a name);
    cut at the width only where no `/` fits."""

    def _handle_long_word(self, reversed_chunks: list[str], cur_line: list[str], cur_len: int, width: int) -> None:
        chunk = reversed_chunks[-1]
        end = chunk.rfind("/", 0, max(width - cur_len, 1)) + 1
        if end > 0 and any(part.strip() for part in chunk[:end].split("/")):
            cur_line.append(chunk[:end])
            reversed_chunks[-1] = chunk[end:]
        elif not cur_line:  # no entry fits a whole line: cut at the width
            super()._handle_long_word(reversed_chunks, cur_line, cur_len, width)


def fit_lines(text: str, width: int) -> str:
    """`text` with each line wrapped between words to `width` (a word longer than that, a path, is split after a
    `/`, else cut at the width). A continuation line goes under the words after a leading `-> ` or label
    (`env:   `), else two columns in from the line's own indent."""
    out: list[str] = []
    for line in text.split("\n"):
        lead = _LEAD.match(line)
        under = len(lead.group(0)) if lead and lead.group(0).strip() else len(line) - len(line.lstrip()) + 2
        wrapper = _PathWrapper(max(width - 1, 30), subsequent_indent=" " * under, break_on_hyphens=False)
        out.append(wrapper.fill(line) or line)
    return "\n".join(out)

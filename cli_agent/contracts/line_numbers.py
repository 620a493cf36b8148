"""Lines as the model is shown them, `NUMBER| text`: how `read_file` and the judge's feedback number a file's lines,
so that `replace_lines` can name them."""

from __future__ import annotations

__all__ = ["numbered"]


def numbered(view: str, first: int, last: int, *, around: int = 3, limit: int = 40) -> str:
    """Lines `first`..`last` (1-based) of `view` with `around` lines either side, each as `NUMBER| text`."""
    lines = view.split("\n")
    if len(lines) > 1 and not lines[-1]:
        lines.pop()
    top, bottom = max(1, first - around), min(len(lines), last + around, max(first, 1) + limit - 1)
    width = len(str(bottom))
    return "\n".join(f"{n:>{width}}| {lines[n - 1]}" for n in range(top, bottom + 1))

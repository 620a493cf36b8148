"""Exact `old` -> `new` replacement in a file's text, and the hints shown when `old` is not found exactly once.

Matching is done on a view of the text where `\\r\\n` reads as `\\n`, so an LF-only `old` matches in a CRLF file;
each match is then replaced in the original text, whose other characters are left exactly as they were. `new` gets
the line ending of the text it replaces (CRLF if that had one, LF if that had one, else the file's dominant one).
"""

from __future__ import annotations

import bisect
import difflib
from dataclasses import dataclass
from typing import Any

from cli_agent.envelope import ToolError

__all__ = ["Replaced", "closest_lines", "replace_text"]

_SHOWN_CHARS = 600
_SCORED_LINES = 50_000


@dataclass(frozen=True)
class Replaced:
    text: str
    count: int
    lines: tuple[int, ...]  # 1-based line of each match


def replace_text(text: str, old: str, new: str, *, newline: str, replace_all: bool, path: str) -> Replaced:
    view = text.replace("\r\n", "\n")
    old_v, new_v = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    starts = _find_all(view, old_v)
    if not starts and old_v.endswith("\n") and not view.endswith("\n"):
        # `old` ends with a newline the file lacks at its end: match without it and keep the file that way
        tail = old_v[:-1]
        if tail and view.endswith(tail) and len(_find_all(view, tail)) == 1:
            old_v, new_v = tail, new_v[:-1] if new_v.endswith("\n") else new_v
            starts = [len(view) - len(tail)]
    lines = tuple(view.count("\n", 0, s) + 1 for s in starts)
    if not starts:
        raise _not_found(view, old_v, path)
    if len(starts) > 1 and not replace_all:
        shown = ", ".join(map(str, lines[:20])) + (", ..." if len(lines) > 20 else "")
        raise ToolError(f"old matches {len(starts)} times in {path} (lines {shown}); include more surrounding "
                        f"lines in old to make it unique, or set replace_all=true to replace every one",
                        lines=list(lines))
    crlf = [i - k for k, i in enumerate(_find_all(text, "\r\n"))]  # where each CRLF sits in the view

    def original(v: int) -> int:
        return v + bisect.bisect_left(crlf, v)

    pieces, done = [], 0
    for s in starts:
        a, b = original(s), original(s + len(old_v))
        replaced = text[a:b]
        nl = "\r\n" if "\r\n" in replaced else "\n" if "\n" in replaced else newline
        pieces += [text[done:a], new_v.replace("\n", nl) if nl != "\n" else new_v]
        done = b
    pieces.append(text[done:])
    return Replaced("".join(pieces), len(starts), lines)


def _find_all(text: str, sub: str) -> list[int]:
    found, i = [], text.find(sub)
    while i >= 0 and sub:
        found.append(i)
        i = text.find(sub, i + len(sub))
    return found


def _not_found(view: str, old: str, path: str) -> ToolError:
    close = closest_lines(view, old)
    squash = " ".join(old.split())
    same = [c for c in close if " ".join(c["text"].split()) == squash]
    if same:
        first, last = same[0]["line"], same[0]["line"] + same[0]["text"].count("\n")
        where = f"line {first} differs" if first == last else f"lines {first}-{last} differ"
        why = (f"old is not in {path} exactly, but {where} from it only in whitespace (indentation, tabs or "
               f"trailing spaces); copy the text exactly")
    else:
        why = f"old was not found in {path}; read the file again and copy the text exactly"
    return ToolError(why + (" (the closest lines are in `closest`)" if close else ""), closest=close)


def closest_lines(view: str, old: str, n: int = 3) -> list[dict[str, Any]]:
    """Up to `n` places in `view` that look most like `old`: {"line", "text"} with as many lines as `old` has."""
    lines = view.split("\n")
    old_lines = old.strip("\n").split("\n")
    anchor = next((ln.strip() for ln in old_lines if ln.strip()), "")
    if not anchor:
        return []
    matcher = difflib.SequenceMatcher(b=anchor, autojunk=False)
    scored = []
    for i, line in enumerate(lines[:_SCORED_LINES]):
        matcher.set_seq1(line.strip())
        if matcher.real_quick_ratio() >= 0.5 and matcher.quick_ratio() >= 0.5:
            ratio = matcher.ratio()
            if ratio >= 0.5:
                scored.append((-ratio, i))
    first = old_lines.index(next(ln for ln in old_lines if ln.strip()))
    out: list[dict[str, Any]] = []
    for _, i in sorted(scored)[:n]:
        top = max(0, i - first)
        text = "\n".join(lines[top:top + len(old_lines)])
        out.append({"line": top + 1, "text": text[:_SHOWN_CHARS]})
    return out

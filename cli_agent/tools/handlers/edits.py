"""Exact `old` -> `new` replacement in a file's text, and the hints shown when `old` is not found exactly once.

Matching is done on a view of the text where `\\r\\n` reads as `\\n`, so an LF-only `old` matches in a CRLF file;
each match is then replaced in the original text, whose other characters are left exactly as they were. `new` gets
the line ending of the text it replaces (CRLF if that had one, LF if that had one, else the file's dominant one).
A text without CRLF is replaced in one `str.replace` pass. The edit names the lines it changed (`regions`), so the
diff never compares whole files.

An `old` not found exactly is looked for with `'` and `"` read alike (one place only), then by whole lines with
looser eyes (tools.handlers.loose_match); a Python `new` that would not parse is mended where only that makes it
parse (tools.handlers.python_mend). The summary says which rule matched and what was mended.

The hint for an `old` that is not found (`closest_lines`) looks up `old`'s first line, pieces and words of it with
`str.find` and scores only the lines holding the most of them, within a time budget: milliseconds on any file.
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
import re
import time
from collections import Counter
from collections.abc import Callable
from typing import Any

from cli_agent.contracts import Region, ToolError, dataclass
from cli_agent.tools.handlers.loose_match import Ambiguous, loose_match
from cli_agent.tools.handlers.python_mend import mended

__all__ = ["replace_text"]

_SHOWN_CHARS = 600
_HINT_BUDGET_S = 0.03  # CPU seconds the closest-lines hint may spend looking
_PIECE = 24  # characters of each piece of old's first line looked up
_WORDS = 6  # words of old's first line looked up
_PER_WORD = 2000  # occurrences of one word looked at
_SCORED = 50  # candidate lines compared with difflib
_COMPARED_CHARS = 200  # of each line and of old's first line
_QUOTES = str.maketrans("'", '"')


@dataclass(frozen=True)
class Replaced:
    text: str
    count: int
    lines: tuple[int, ...]  # 1-based line of each match
    regions: tuple[Region, ...] = ()  # the lines changed, before and after
    rule: str = ""  # how `old` matched when not exactly (tools.handlers.loose_match), e.g. "indentation ignored"


def replace_text(text: str, old: str, new: str, *, newline: str, replace_all: bool, path: str,
                 deadline: float | None = None, loose: bool = True,
                 accept: Callable[[str, str], bool] | None = None) -> Replaced:
    """`accept(before, after)`: a check of an edit (a Python file still parses); of the indentation rule's two
    readings of `new` (`LooseMatch.anchored`), the other is taken when only it passes. With `loose` and `accept`,
    a `new` that fails the check is mended where only that passes it (tools.handlers.python_mend)."""
    if not loose or accept is None:
        return _replace(text, old, new, newline, replace_all, path, deadline, loose, accept)
    tried: dict[str, Replaced] = {}  # each reading of new, replaced once

    def replaced(body: str) -> str:
        tried[body] = _replace(text, old, body, newline, replace_all, path, deadline, loose, accept)
        return tried[body].text

    fixed, what = mended(text, replaced, new)
    done = tried[fixed]
    return dataclasses.replace(done, rule=", ".join(filter(None, (done.rule, what)))) if what else done


def _replace(text: str, old: str, new: str, newline: str, replace_all: bool, path: str, deadline: float | None,
             loose: bool, accept: Callable[[str, str], bool] | None) -> Replaced:
    view = text.replace("\r\n", "\n")  # the same object when there is no CRLF: no copy
    old_v, new_v = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
    starts = _find_all(view, old_v)
    if loose and "\n" in new_v.rstrip("\n"):
        # a match that starts inside a line's indentation is `old` written less indented than the file: replaced
        # there, only new's first line would take the rest of the indentation; the indentation rule re-indents all
        starts = [s for s in starts if not _inside_indentation(view, s)]
    if not starts and old_v.endswith("\n") and not view.endswith("\n"):
        # `old` ends with a newline the file lacks at its end: match without it and keep the file that way
        tail = old_v[:-1]
        if tail and view.endswith(tail) and len(_find_all(view, tail)) == 1:
            old_v, new_v = tail, new_v[:-1] if new_v.endswith("\n") else new_v
            starts = [len(view) - len(tail)]
    rule = "line endings ignored" if "\r" in old and "\r\n" not in text else ""  # CRLF in old, LF in the file
    if not starts and loose:
        starts = _quote_blind(view, old_v, multiline="\n" in new_v.rstrip("\n"))
        rule = "quotes ignored" if starts else rule
    if not starts and loose:
        return _loosely(text, view, old_v, new_v, newline, path, deadline, accept)
    if not starts:
        raise _not_found(view, old_v, path, deadline)
    lines = _line_numbers(view, starts)
    if len(starts) > 1 and not replace_all:
        shown = ", ".join(map(str, lines[:20])) + (", ..." if len(lines) > 20 else "")
        raise ToolError(f"old matches {len(starts)} times in {path} (lines {shown}); include more surrounding "
                        f"lines in old to make it unique, or set replace_all=true to replace every one",
                        lines=list(lines))
    regions = _regions(lines, old_v.count("\n"), new_v.count("\n"))
    if view is text or "\r\n" not in text:
        return Replaced(_spliced(text, starts, len(old_v), new_v), len(starts), lines, regions, rule)
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
    return Replaced("".join(pieces), len(starts), lines, regions, rule)


def _loosely(text: str, view: str, old: str, new: str, newline: str, path: str,
             deadline: float | None, accept: Callable[[str, str], bool] | None = None) -> Replaced:
    """The one loose match of `old` (tools.handlers.loose_match) replaced, or the not-found or ambiguity error."""
    try:
        found = loose_match(view, old, new)
    except Ambiguous as exc:
        shown = ", ".join(map(str, exc.lines))
        raise ToolError(f"old is not in {path} exactly, and with {exc.rule} it matches several places (lines "
                        f"{shown}); copy the text exactly, with more surrounding lines", lines=exc.lines) from None
    if found is None:
        raise _not_found(view, old, path, deadline)
    regions = _regions((found.line,), view.count("\n", found.start, found.end), found.new.count("\n"))
    a, b, nl = found.start, found.end, "\n"
    if view is not text and "\r\n" in text:
        crlf = [i - k for k, i in enumerate(_find_all(text, "\r\n"))]
        a, b = a + bisect.bisect_left(crlf, a), b + bisect.bisect_left(crlf, b)
        nl = "\r\n" if "\r\n" in text[a:b] else "\n" if "\n" in text[a:b] else newline
    edited = text[:a] + found.new.replace("\n", nl) + text[b:]
    if found.anchored is not None and accept is not None and not accept(text, edited):
        other = text[:a] + found.anchored.replace("\n", nl) + text[b:]
        if accept(text, other):
            return Replaced(other, 1, (found.line,), regions, found.rule + ", the lines of old kept where they are")
    return Replaced(edited, 1, (found.line,), regions, found.rule)


def _quote_blind(view: str, old: str, *, multiline: bool) -> list[int]:
    """Where `old` is in `view` when `'` and `"` read alike (a model that writes code inside a JSON string often
    turns one into the other): the one place, or none when there are several. Both readings have the lengths of
    the originals, so a place found is the place to replace."""
    if "'" not in old and '"' not in old:
        return []
    starts = _find_all(view.translate(_QUOTES), old.translate(_QUOTES))
    if multiline:
        starts = [s for s in starts if not _inside_indentation(view, s)]
    return starts if len(starts) == 1 else []


def _spliced(text: str, starts: list[int], length: int, new: str) -> str:
    """`text` (no CRLF, so the view itself) with `old` replaced at `starts`, its first or every occurrences: one
    `str.replace` pass, no copies of the text in pieces."""
    return text.replace(text[starts[0]:starts[0] + length], new, 1 if len(starts) == 1 else -1)


def _line_numbers(view: str, starts: list[int]) -> tuple[int, ...]:
    out, line, counted = [], 1, 0
    for s in starts:
        line += view.count("\n", counted, s)
        counted = s
        out.append(line)
    return tuple(out)


def _regions(lines: tuple[int, ...], old_breaks: int, new_breaks: int) -> tuple[Region, ...]:
    """The lines each match changed (matches on the same or touching lines form one region)."""
    out: list[Region] = []
    shift = 0
    group: list[int] | None = None  # [first line, end line, after first, matches] (0-based, end exclusive)
    for line in lines:
        first = line - 1
        if group is not None and first < group[1]:
            group[1], group[3] = first + old_breaks + 1, group[3] + 1
            continue
        if group is not None:
            out.append(_closed(group, old_breaks, new_breaks))
            shift += group[3] * (new_breaks - old_breaks)
        group = [first, first + old_breaks + 1, first + shift, 1]
    if group is not None:
        out.append(_closed(group, old_breaks, new_breaks))
    return tuple(out)


def _closed(group: list[int], old_breaks: int, new_breaks: int) -> Region:
    first, end, after, matches = group
    return Region(first, end - first, after, end - first + matches * (new_breaks - old_breaks))


def _inside_indentation(view: str, at: int) -> bool:
    """Whether `at` is past the start of its line with only spaces and tabs before it."""
    line_start = view.rfind("\n", 0, at) + 1
    return at > line_start and not view[line_start:at].strip(" \t")


def _find_all(text: str, sub: str) -> list[int]:
    found, i = [], text.find(sub)
    while i >= 0 and sub:
        found.append(i)
        i = text.find(sub, i + len(sub))
    return found


def _not_found(view: str, old: str, path: str, deadline: float | None = None) -> ToolError:
    close = closest_lines(view, old, deadline=deadline)
    squash = " ".join(old.split())
    same = [c for c in close if " ".join(c["text"].split()) == squash]
    if same:
        first, last = same[0]["line"], same[0]["line"] + same[0]["text"].count("\n")
        where = f"line {first} differs" if first == last else f"lines {first}-{last} differ"
        why = (f"old is not in {path} exactly, but {where} from it only in whitespace (indentation, tabs or "
               f"trailing spaces); copy the text exactly, or replace them with replace_lines (path={path}, "
               f"start_line={first}, end_line={last}, new=the lines as they should be)")
    else:
        why = (f"old was not found in {path}; read the file again and copy the text exactly, or use replace_lines "
               f"with the line numbers read_file shows")
    return ToolError(why + (" (the closest lines are in `closest`)" if close else ""), closest=close)


def closest_lines(view: str, old: str, n: int = 3, *, deadline: float | None = None) -> list[dict[str, Any]]:
    """Up to `n` places in `view` that look most like `old`: {"line", "text"} with as many lines as `old` has.

    Candidates are the lines holding the most of `old`'s first non-blank line or pieces of it, else of its words
    (found with `str.find`); only they are compared with difflib. Looking stops at `deadline` or after a short
    budget."""
    old_lines = old.strip("\n").split("\n")
    anchor = next((ln.strip() for ln in old_lines if ln.strip()), "")
    if not anchor:
        return []
    stop = _Budget(deadline)
    if stop.spent():
        return []
    starts = _candidates(view, anchor, stop)
    probe = anchor[:_COMPARED_CHARS]
    scored = []
    for start in starts:
        end = view.find("\n", start)
        line = view[start:len(view) if end < 0 else end].strip()[:_COMPARED_CHARS]
        ratio = difflib.SequenceMatcher(None, line, probe, autojunk=False).ratio()
        if ratio >= 0.5:
            scored.append((-ratio, start))
        if stop.spent():
            break
    first = old_lines.index(next(ln for ln in old_lines if ln.strip()))
    out: list[dict[str, Any]] = []
    for _, start in sorted(scored)[:n]:
        top = start
        for _ in range(first):  # back to where `old` would begin
            if top == 0:
                break
            top = view.rfind("\n", 0, top - 1) + 1
        end = top
        for _ in range(len(old_lines)):
            cut = view.find("\n", end, end + _SHOWN_CHARS + 1)
            if cut < 0:
                end = min(len(view), end + _SHOWN_CHARS)
                break
            end = cut + 1
        out.append({"line": view.count("\n", 0, top) + 1, "text": view[top:end].removesuffix("\n")[:_SHOWN_CHARS]})
    return out


class _Budget:
    """The hint's budget: `_HINT_BUDGET_S` of this thread's CPU time (so a busy machine does not starve it into a
    worse answer), and never past the run's `deadline` (wall time)."""

    def __init__(self, deadline: float | None) -> None:
        self._cpu_end = time.thread_time() + _HINT_BUDGET_S
        self._deadline = deadline

    def spent(self) -> bool:
        return time.thread_time() >= self._cpu_end or (self._deadline is not None
                                                       and time.monotonic() >= self._deadline)


def _candidates(view: str, anchor: str, stop: _Budget) -> list[int]:
    """Start offsets of the lines holding most of the anchor: itself, pieces of it, then its longest words."""
    size = len(anchor)
    pieces = [anchor[:_COMPARED_CHARS]] + [anchor[i:i + _PIECE] for i in (0, size // 3, 2 * size // 3, size - _PIECE)
                                           if size > 2 * _PIECE and i >= 0]
    words = sorted(set(re.findall(r"\w{3,}", anchor)), key=len, reverse=True)[:_WORDS]
    score: Counter[int] = Counter()
    for word in dict.fromkeys(pieces + words):
        if word in words and score:  # pieces of the line were found: its words would add only noise
            break
        at, seen = view.find(word), 0
        while at >= 0 and seen < _PER_WORD:
            start = view.rfind("\n", 0, at) + 1
            score[start] += len(word)
            end = view.find("\n", at)
            if end < 0:
                break
            at, seen = view.find(word, end), seen + 1
            if not seen % 256 and stop.spent():
                break
        if stop.spent():
            break
    return [start for start, _ in score.most_common(_SCORED)]

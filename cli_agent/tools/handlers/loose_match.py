"""Forgiving matching for `edit_file`: where `old` is not in the file exactly, find it by whole lines with looser
eyes, and say which rule matched.

    found = loose_match(view, old, new)   # None: no rule found exactly one place
    found.start, found.end                # the span of `view` to replace (whole lines, without the last newline)
    found.new                             # `new` as it will be written (re-indented by the indentation rule)
    found.rule                            # "trailing whitespace ignored" | "indentation ignored" | "indentation and
                                          # quotes ignored" (' and " read alike)
    found.anchored                        # the indentation rule's other reading of `new`, or None (see below)

A model that re-indents `new` often mixes two frames: the lines it adds are indented as its `old` was written, the
lines of `old` it repeats (the anchor an insertion is made next to) as the file has them. `anchored` reads `new`
that way: a line equal to a line of `old` (stripped) at that line's indentation in the file, the others shifted.
Which reading is right can't be told from the text alone (wrapping the anchor in a block looks the same); the
caller picks `anchored` only when `new` as shifted fails its check (Python that no longer parses) and it passes.

The rules are tried in order, and a rule applies only when it finds exactly one place: a rule that finds several
raises `Ambiguous` (with their line numbers) rather than guessing. Line endings are already folded by the caller
(`\\r\\n` reads as `\\n`). The work is bounded: every file line is compared against the first line of `old`, and
only where that agrees are the other lines compared, at most `_MAX_COMPARISONS` line comparisons a rule.
"""

from __future__ import annotations

from collections.abc import Callable

from cli_agent.contracts import dataclass

_MAX_COMPARISONS = 2_000_000


@dataclass(frozen=True)
class LooseMatch:
    start: int
    end: int
    new: str
    rule: str
    line: int  # 1-based first line of the match
    anchored: str | None = None  # `new` with the lines that repeat old's kept at their indentation in the file


class Ambiguous(Exception):
    def __init__(self, rule: str, lines: list[int]) -> None:
        super().__init__(rule)
        self.rule = rule
        self.lines = lines


def _rstrip(line: str) -> str:
    return line.rstrip()


def _strip(line: str) -> str:
    return line.strip()


_QUOTES = str.maketrans("'", '"')


def _strip_quotes(line: str) -> str:
    return line.strip().translate(_QUOTES)


def loose_match(view: str, old: str, new: str) -> LooseMatch | None:
    """The one place `old` matches under the first rule that finds any, or None; raises `Ambiguous`."""
    old_lines = old[:-1].split("\n") if old.endswith("\n") else old.split("\n")
    if not any(line.strip() for line in old_lines):
        return None
    new_body = new[:-1] if old.endswith("\n") and new.endswith("\n") else new
    lines = view.split("\n")
    rules: tuple[tuple[str, Callable[[str], str]], ...] = (
        ("trailing whitespace ignored", _rstrip), ("indentation ignored", _strip),
        ("indentation and quotes ignored", _strip_quotes))
    for rule, key in rules:
        starts = _find_lines(lines, [key(line) for line in old_lines], key)
        if len(starts) > 1:
            raise Ambiguous(rule, [s + 1 for s in starts])
        if starts:
            first = starts[0]
            offset = sum(len(line) + 1 for line in lines[:first])
            span = lines[first:first + len(old_lines)]
            if key is not _rstrip and not _shifted(old_lines, span):
                return None  # the same words, but nested differently: not the same code
            body = new_body if key is _rstrip else _reindent(new_body, old_lines, span)
            anchored = None if key is _rstrip else _anchored(new_body, old_lines, span)
            return LooseMatch(offset, offset + len("\n".join(span)), body, rule, first + 1,
                              anchored if anchored != body else None)
    return None


def _find_lines(lines: list[str], wanted: list[str], key: Callable[[str], str]) -> list[int]:
    """Up to two indexes where `len(wanted)` consecutive lines have the wanted keys."""
    found: list[int] = []
    budget = _MAX_COMPARISONS
    head, size = wanted[0], len(wanted)
    for i in range(len(lines) - size + 1):
        budget -= 1
        if key(lines[i]) != head:
            continue
        j = 1
        while j < size and key(lines[i + j]) == wanted[j]:
            j += 1
        budget -= j
        if j == size:
            found.append(i)
            if len(found) > 1:
                break
        if budget <= 0:
            return []
    return found


def _indent(line: str) -> str:
    return line[:len(line) - len(line.lstrip())]


def _common_indent(lines: list[str]) -> str:
    indents = [_indent(line) for line in lines if line.strip()]
    if not indents:
        return ""
    common = indents[0]
    for ind in indents[1:]:
        while not ind.startswith(common):
            common = common[:-1]
    return common


def _shifted(old_lines: list[str], span: list[str]) -> bool:
    """Whether `span` is `old_lines` with one indentation added to or removed from every line."""
    had, has = _common_indent(old_lines), _common_indent(span)
    return all(a[len(had):].rstrip().translate(_QUOTES) == b[len(has):].rstrip().translate(_QUOTES)
               for a, b in zip(old_lines, span, strict=True) if a.strip())


def _reindent(new: str, old_lines: list[str], span: list[str]) -> str:
    """`new` moved from the indentation `old` was written with to the one the file has at the match: every line
    shifted by the same amount, so the nesting among `new`'s own lines is kept (a method added after the one `old`
    names stays a method, its body inside it)."""
    had, has = _common_indent(old_lines), _common_indent(span)
    if had == has:
        return new
    unit = "\t" if has.startswith("\t") else " "
    out = []
    for line in new.split("\n"):
        if not line.strip():
            out.append(line)
        elif line.startswith(had):
            out.append(has + line[len(had):])
        else:  # less indented than old's own lines: shifted by the same width, never past the margin
            width = max(0, len(_indent(line)) + len(has) - len(had))
            out.append(unit * width + line.lstrip())
    return "\n".join(out)


def _anchored(new: str, old_lines: list[str], span: list[str]) -> str:
    """`new` re-indented with the lines that repeat a line of old at that line's indentation in the file."""
    where = {line.strip(): _indent(at) for line, at in zip(old_lines, span, strict=True) if line.strip()}
    shifted = _reindent(new, old_lines, span).split("\n")
    return "\n".join(where[line.strip()] + line.strip() if line.strip() in where else moved
                     for line, moved in zip(new.split("\n"), shifted, strict=True))


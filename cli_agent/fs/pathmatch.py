"""Path patterns: the globs of protected paths, locks, `list_files(pattern=)` and `search(glob=)`, and `.gitignore`.

One syntax everywhere, the one of `.gitignore` (git's wildmatch): `*` and `?` stay within a folder, `[...]` is a
class (`!` or `^` negates, `a-z` ranges, `[:alpha:]` names), `\\` escapes, `**` spans folders (`**/x`, `x/**`,
`a/**/b`; elsewhere it is `*`). A pattern without a `/` (other than a trailing one) matches a name at any depth
(`*.py`, `.git`); a pattern with one is anchored to its base (`src/*.py`, `.git/**`). Paths are workspace-relative
POSIX strings, matched by character (git matches bytes: one `?` never matches an `é`, two do). A malformed pattern
(an unclosed `[`, an unknown `[:name:]`, a trailing `\\`) matches nothing, as in git; `glob_problem` names what is
wrong with one, for the places that refuse it instead.

Matching costs time linear in the path times the pattern, whatever either holds: a pattern whose regular
expression could backtrack (two `*` in one name, two `**`) is run as a set-of-states automaton instead of `re`.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence

from cli_agent.contracts import dataclass

__all__ = ["IgnoreRules", "compile_glob", "glob_problem"]

_NAMED = {
    "alnum": "a-zA-Z0-9", "alpha": "a-zA-Z", "blank": " \\t", "cntrl": "\\x00-\\x1f\\x7f", "digit": "0-9",
    "graph": "\\x21-\\x7e", "lower": "a-z", "print": "\\x20-\\x7e",
    "punct": re.escape("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"),
    "space": " \\t\\n\\r\\f\\v", "upper": "A-Z", "xdigit": "0-9a-fA-F",
}


class Malformed(ValueError):
    """A pattern git would never match with."""


def fold(text: str) -> str:
    """The spelling protected paths are compared in: NFC, case-folded (`.GIT` and an NFD `é` match too)."""
    return unicodedata.normalize("NFC", text).casefold()


# -- patterns to tokens -------------------------------------------------------------------------------------------
# A token is (kind, regex): "lit", "one" (? or a class: one character, never "/"), "star" (* within a name),
# "dirs" (**/: nothing, or anything ending in "/"), "all" (a trailing **: anything).

Token = tuple[str, str]


def _class(pattern: str, i: int) -> tuple[str, int]:
    """The class starting at pattern[i] == "[" as a regex class, and the index after it (git's wildmatch rules)."""
    n = len(pattern)
    i += 1
    negate = i < n and pattern[i] in "!^"
    i += negate
    parts: list[str] = []
    prev: str | None = None
    first = True
    while True:
        if i >= n:
            raise Malformed("a '[' is never closed")
        ch = pattern[i]
        if ch == "]" and not first:
            break
        first = False
        if ch == "\\":
            i += 1
            if i >= n:
                raise Malformed("a '\\' ends the pattern")
            prev = pattern[i]
            parts.append(re.escape(prev))
        elif ch == "-" and prev is not None and i + 1 < n and pattern[i + 1] != "]":
            i += 1
            hi = pattern[i]
            if hi == "\\":
                i += 1
                if i >= n:
                    raise Malformed("a '\\' ends the pattern")
                hi = pattern[i]
            if prev <= hi:  # git: a reversed range matches only its first character, already added
                parts.append(f"{re.escape(prev)}-{re.escape(hi)}")
            prev = None
        elif ch == "[" and pattern.startswith(":", i + 1):
            end = pattern.find("]", i + 2)
            if end < 0:
                raise Malformed("a '[' is never closed")
            if pattern[end - 1] != ":" or end - 1 < i + 2:
                parts.append(re.escape("["))  # no ":]": an ordinary "["
                prev = "["
            else:
                name = pattern[i + 2:end - 1]
                if name not in _NAMED:
                    raise Malformed(f"unknown character class [:{name}:]")
                parts.append(_NAMED[name])
                prev = None
                i = end
        else:
            prev = ch
            parts.append(re.escape(ch))
        i += 1
    body = "".join(parts)
    if negate:
        return f"[^/{body}]", i + 1
    return (f"(?!/)[{body}]" if body else "(?!)"), i + 1


def _tokens(pattern: str) -> list[Token]:
    out: list[Token] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            j = i
            while j < n and pattern[j] == "*":
                j += 1
            before = i == 0 or pattern[i - 1] == "/"
            if before and j == n:
                out.append(("all", ".*"))
                i = j
                continue
            if before and pattern[j] == "/":
                out.append(("dirs", "(?:.*/)?"))
                i = j + 1
                continue
            out.append(("star", "[^/]*"))
            i = j
        elif c == "*":
            out.append(("star", "[^/]*"))
            i += 1
        elif c == "?":
            out.append(("one", "[^/]"))
            i += 1
        elif c == "[":
            regex, i = _class(pattern, i)
            out.append(("one", regex))
        elif c == "\\":
            if i + 1 >= n:
                raise Malformed("a '\\' ends the pattern")
            out.append(("lit", pattern[i + 1]))
            i += 2
        else:
            out.append(("lit", c))
            i += 1
    return out


def glob_problem(pattern: str) -> str | None:
    """Why git would never match with `pattern` (None when it is well formed)."""
    try:
        _tokens(pattern.rstrip("/"))
    except Malformed as exc:
        return str(exc)
    return None


# -- matching -----------------------------------------------------------------------------------------------------

class Glob:
    """One compiled pattern. `fullmatch(path)`: the whole path matches; with `below`, also a path under a
    matching folder."""

    def __init__(self, pattern: str, *, folded: bool = False, below: bool = False) -> None:
        self.pattern = pattern
        self._folded = folded
        self._below = below
        text = (fold(pattern) if folded else pattern).rstrip("/")
        try:
            tokens = _tokens(text.lstrip("/"))
        except Malformed:
            tokens = [("lit", ""), ("one", "(?!)")]
        if "/" not in text:
            tokens.insert(0, ("dirs", "(?:.*/)?"))
        self.regex: str | None = None  # set when `re` matches it without backtracking blow-up
        if _linear_in_re(tokens):
            self.regex = "".join(re.escape(v) if k == "lit" else v for k, v in tokens) + ("(?:/.*)?" if below
                                                                                           else "")
            self._re = re.compile(self.regex, re.DOTALL)
        else:
            self._automaton = _Automaton(tokens)

    def fullmatch(self, path: str) -> bool:
        if self._folded:
            path = fold(path)
        if self.regex is not None:
            return self._re.fullmatch(path) is not None
        return self._automaton.fullmatch(path, below=self._below)


def compile_glob(pattern: str, *, folded: bool = False) -> Glob:
    return Glob(pattern, folded=folded)


def _linear_in_re(tokens: Sequence[Token]) -> bool:
    """At most one `**` and at most one `*` per name: no two quantifiers can trade the same characters."""
    if sum(k in ("dirs", "all") for k, _ in tokens) > 1 and not (len(tokens) == 2 and tokens[1][0] == "all"):
        return False
    stars = 0
    for kind, value in tokens:
        if kind == "star":
            stars += 1
            if stars > 1:
                return False
        elif kind == "dirs" or (kind == "lit" and value == "/"):
            stars = 0
        elif kind == "all" and stars:
            return False
    return True


class _Automaton:
    """The pattern's states as bits of an int; one step per character of the path (Thompson's construction)."""

    def __init__(self, tokens: Sequence[Token]) -> None:
        self.tokens = tuple(tokens)
        self.accept = 1 << len(tokens)
        self.skip = sum(1 << i for i, (k, _) in enumerate(tokens) if k in ("star", "dirs", "all"))
        # `**/` may be skipped where it starts, not once it has eaten characters (then it must end with "/")
        self.dirs = sum(1 << i for i, (k, _) in enumerate(tokens) if k == "dirs")
        self._steps: dict[str, tuple[int, int]] = {}
        self.start = self._closure(1)

    def _closure(self, states: int) -> int:
        while True:
            more = states | ((states & self.skip) << 1)
            if more == states:
                return states
            states = more

    def _step(self, ch: str) -> tuple[int, int]:
        """(the states that consume `ch` and move on, the states that consume it and stay)."""
        found = self._steps.get(ch)
        if found is None:
            move = stay = 0
            for i, (kind, value) in enumerate(self.tokens):
                if kind == "lit":
                    move |= (value == ch) << i
                elif kind == "one":
                    move |= (ch != "/" and re.fullmatch(value, ch) is not None) << i
                elif kind == "star":
                    stay |= (ch != "/") << i
                else:  # dirs, all
                    stay |= 1 << i
                    move |= (kind == "dirs" and ch == "/") << i
            found = self._steps[ch] = (move, stay)
        return found

    def fullmatch(self, path: str, *, below: bool) -> bool:
        states = self.start
        for ch in path:
            if below and ch == "/" and states & self.accept:
                return True
            move, stay = self._step(ch)
            kept = states & stay
            states = self._closure(((states & move) << 1) | (kept & ~self.dirs)) | (kept & self.dirs)
            if not states:
                return False
        return bool(states & self.accept)


class GlobSet:
    """A list of globs; `match(path)` names the first glob matching the path or one of its folders."""

    def __init__(self, globs: Iterable[str], *, folded: bool = False) -> None:
        self.globs = tuple(globs)
        self._folded = folded
        self._each = [Glob(g, folded=folded, below=True) for g in self.globs]
        fast = [g.regex for g in self._each if g.regex is not None]
        self._any = re.compile("|".join(f"(?:{r})" for r in fast) or "(?!)", re.DOTALL)
        self._slow = [g for g in self._each if g.regex is None]

    def match(self, path: str) -> str | None:
        if path in ("", "."):
            return None
        folded = fold(path) if self._folded else path
        if not self._any.fullmatch(folded) and not any(g.fullmatch(path) for g in self._slow):
            return None
        return next(g.pattern for g in self._each if g.fullmatch(path))


@dataclass(frozen=True)
class _Rule:
    base: str  # folder of the .gitignore, "" for the root
    glob: Glob
    negate: bool
    dir_only: bool


class IgnoreRules:
    """`.gitignore` rules gathered while walking down; the last matching rule wins. `!` negation is supported."""

    def __init__(self, rules: Sequence[_Rule] = ()) -> None:
        self._rules = list(rules)

    def extended(self, base: str, text: str) -> IgnoreRules:
        """These rules plus those of the `.gitignore` in folder `base` ("" for the root) holding `text`."""
        return IgnoreRules(self._rules + list(_parse(base, text.splitlines())))

    def ignored(self, path: str, is_dir: bool) -> bool:
        verdict = False
        for rule in self._rules:
            if rule.dir_only and not is_dir:
                continue
            if rule.base:
                if not path.startswith(rule.base + "/"):
                    continue
                sub = path[len(rule.base) + 1:]
            else:
                sub = path
            if rule.glob.fullmatch(sub):
                verdict = not rule.negate
        return verdict


def _parse(base: str, lines: Iterable[str]) -> Iterable[_Rule]:
    """git's rules for a line: trailing spaces go unless escaped, `#` starts a comment, `!` negates, `\\!` and `\\#`
    are literal; a malformed pattern is kept and matches nothing, as git keeps it."""
    for raw in lines:
        stripped = _trimmed(raw.rstrip("\r"))
        if not stripped or stripped.startswith("#"):
            continue
        negate = stripped.startswith("!")
        if negate:
            stripped = stripped[1:]
        dir_only = stripped.endswith("/")
        if not stripped.strip("/"):
            continue
        yield _Rule(base, Glob(stripped), negate, dir_only)


def _trimmed(line: str) -> str:
    """The line without its trailing spaces, an escaped one (`\\ `) kept."""
    end = 0
    i = 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            end = min(i, len(line))
            continue
        i += 1
        if line[i - 1] != " ":
            end = i
    return line[:end]

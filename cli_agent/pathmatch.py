"""Path patterns: the globs of protected paths, locks, `list_files(pattern=)` and `search(glob=)`, and `.gitignore`.

One syntax everywhere, the one of `.gitignore`: `*` and `?` stay within a folder, `[...]` is a class, `**` spans
folders. A pattern without a `/` (other than a trailing one) matches a name at any depth (`*.py`, `.git`); a
pattern with one is anchored to its base (`src/*.py`, `.git/**`). Paths are workspace-relative POSIX strings.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["GlobSet", "IgnoreRules", "fold", "glob_regex"]


def fold(text: str) -> str:
    """The spelling protected paths are compared in: NFC, case-folded (`.GIT` and an NFD `é` match too)."""
    return unicodedata.normalize("NFC", text).casefold()


def _translate(pattern: str) -> str:
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if pattern.startswith("**", i):
            before_ok = i == 0 or pattern[i - 1] == "/"
            after = pattern[i + 2:i + 3]
            if before_ok and after == "/":
                out.append("(?:.*/)?")
                i += 3
                continue
            if before_ok and after == "":
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
            i += 2
        elif c == "*":
            out.append("[^/]*")
            i += 1
        elif c == "?":
            out.append("[^/]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i + 2 if pattern[i + 1:i + 2] in ("!", "^") else i + 1)
            if j < 0:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1:j]
            if body[:1] in ("!", "^"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = j + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


def glob_regex(pattern: str, *, folded: bool = False) -> re.Pattern[str]:
    """Compile one glob; anchored patterns match the whole path, unanchored ones a name at any depth."""
    if folded:
        pattern = fold(pattern)
    pattern = pattern.rstrip("/")
    anchored = "/" in pattern
    body = _translate(pattern.lstrip("/"))
    return re.compile(body if anchored else "(?:.*/)?" + body, re.DOTALL)


class GlobSet:
    """A list of globs; `match(path)` names the first glob matching the path or one of its folders."""

    def __init__(self, globs: Iterable[str], *, folded: bool = False) -> None:
        self.globs = tuple(globs)
        self._folded = folded
        covered = [glob_regex(g, folded=folded).pattern + "(?:/.*)?" for g in self.globs]
        self._each = [re.compile(c, re.DOTALL) for c in covered]
        self._any = re.compile("|".join(f"(?:{c})" for c in covered) or "(?!)", re.DOTALL)

    def match(self, path: str) -> str | None:
        if path in ("", "."):
            return None
        if self._folded:
            path = fold(path)
        if not self._any.fullmatch(path):
            return None
        return next(g for g, rx in zip(self.globs, self._each, strict=True) if rx.fullmatch(path))


@dataclass(frozen=True)
class _Rule:
    base: str  # folder of the .gitignore, "" for the root
    rx: re.Pattern[str]
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
            if rule.rx.fullmatch(sub):
                verdict = not rule.negate
        return verdict


def _parse(base: str, lines: Iterable[str]) -> Iterable[_Rule]:
    for raw in lines:
        line = raw.rstrip("\r")
        stripped = line.rstrip(" ")
        if line.endswith("\\ ") and not line.endswith("\\\\ "):
            stripped = line[:-2] + " "
        if not stripped or stripped.startswith("#"):
            continue
        negate = stripped.startswith("!")
        if negate or stripped.startswith("\\!") or stripped.startswith("\\#"):
            stripped = stripped[1:]
        dir_only = stripped.endswith("/")
        if not stripped.strip("/"):
            continue
        yield _Rule(base, glob_regex(stripped), negate, dir_only)

"""The one reader of the TOML files cli-agent checks (config, tool specs, facts, workflows, MCP servers, eval
suites), and the one wording of what is wrong with one: the file, the line, the key, the problem.

    toml = read_toml(path, "tool_specs/greet.toml", SpecError)   # the text parsed; SpecError if it can't be
    spec = load_checked(ToolSpec, toml, SpecError)               # checked as the dataclass (`checked`)
    raise SpecError(toml.at(("hints", 0), "not a valid regular expression"))   # a check of the caller's own

Every error is one line: `tool_specs/greet.toml:7: hints[0]: not a valid regular expression`, or without the
line when the key is not in the file (`wf.toml: description: missing required key`). A syntax error:
`config.toml:3: invalid TOML: Expected '=' after a key in a key/value pair (column 7)`.
"""

from __future__ import annotations

import functools
import re
import tomllib
from collections.abc import Callable
from typing import Any, TypeVar

from cli_agent.contracts import dataclass
from cli_agent.validated.checked import check
from cli_agent.validated.wording import Loc, Problem, problem_of

__all__ = ["TomlFile", "load_checked", "parse_toml", "read_toml"]

T = TypeVar("T")
_AT = re.compile(r"\s*\(at (?:line (\d+), column (\d+)|end of document)\)$")


@dataclass(frozen=True)
class TomlFile:
    """A parsed TOML file: `where` names it in errors."""

    where: str
    text: str
    data: dict[str, Any]

    def at(self, loc: Loc, message: str) -> str:
        """`where:LINE: key: message`: the line of the key (or of its nearest table) when the file has one."""
        line = self.line_of(loc)
        return f"{self.where}{f':{line}' if line else ''}: {Problem(loc, message)}"

    def line_of(self, loc: Loc) -> int | None:
        """The line of the deepest key or table header on `loc`'s path; else the first one under `loc`."""
        best: tuple[int, int] | None = None
        for path, line in _key_lines(self.text):
            if path == loc[: len(path)] and (best is None or len(path) > best[0]):
                best = (len(path), line)
        if best is not None:
            return best[1]
        return next((line for path, line in _key_lines(self.text) if loc and path[: len(loc)] == loc), None)


def read_toml(file: Any, where: str, error: type[Exception]) -> TomlFile:
    """A TOML file (a Path or an importlib Traversable) parsed; `error` naming `where` if it can't be read."""
    try:
        text = file.read_bytes().decode("utf-8")
    except UnicodeDecodeError as exc:
        raise error(f"{where}: not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{where}: cannot read: {exc.strerror or exc}") from None
    return parse_toml(text, where, error)


def parse_toml(text: str, where: str, error: type[Exception]) -> TomlFile:
    """`text` parsed; `error` (`where:LINE: invalid TOML: ... (column N)`) if it is not TOML."""
    try:
        return TomlFile(where, text, tomllib.loads(text))
    except tomllib.TOMLDecodeError as exc:
        message = str(exc)
        match = _AT.search(message)
        if match is None:
            raise error(f"{where}: invalid TOML: {message}") from None
        line = match.group(1) or str(len(text.splitlines()) or 1)
        column = f" (column {match.group(2)})" if match.group(2) else " (at the end)"
        raise error(f"{where}:{line}: invalid TOML: {message[: match.start()]}{column}") from None


def load_checked(cls: type[T], toml: TomlFile, error: type[Exception], *, strict: bool = False,
                 suggest: Callable[[str], str | None] | None = None, part: Loc = ()) -> T:
    """The file's data (or its table at `part`, such as `("steps", 2)`) as a `cls` (`checked.check`); `error`
    naming the file, the line and the key if it is wrong. `suggest(key)` may word the hint for an unknown key
    (`wording.problem_of`)."""
    from pydantic import ValidationError  # deferred: pydantic (40 ms), only when a config file is checked

    data: Any = toml.data
    for key in part:
        data = data[key]
    try:
        return check(cls, data, strict=strict)
    except ValidationError as exc:
        problem = problem_of(exc, cls, data, suggest=suggest)
        raise error(toml.at((*part, *problem.loc), problem.message)) from None


# a table header (`[a.b]`, `[[a]]`) or a key (`a.b =`), the parts of a dotted key bare or quoted
_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_DOTTED = rf"{_PART}(?:\s*\.\s*{_PART})*"
_HEADER = re.compile(rf"^\s*(\[\[?)\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_KEY = re.compile(rf"^\s*({_DOTTED})\s*=")


@functools.lru_cache(maxsize=8)
def _key_lines(text: str) -> tuple[tuple[Loc, int], ...]:
    """(key path, line) of every table header and key in `text`, arrays of tables indexed: best effort, by line."""
    out: list[tuple[Loc, int]] = []
    table: Loc = ()
    arrays: dict[tuple[str, ...], int] = {}  # an array of tables -> its last index
    open_string = ""
    for number, line in enumerate(text.splitlines(), 1):
        if open_string:
            open_string = "" if line.count(open_string) % 2 else open_string
            continue
        header = _HEADER.match(line)
        if header:
            names = _parts(header.group(2))
            if header.group(1) == "[[":
                arrays[names] = arrays.get(names, -1) + 1
            table = _indexed(names, arrays)
            out.append((table, number))
            continue
        key = _KEY.match(line)
        if key:
            out.append(((*table, *_parts(key.group(1))), number))
            rest = line[key.end():]
            open_string = next((q for q in ('"""', "'''") if rest.count(q) % 2), "")
    return tuple(out)


def _indexed(names: tuple[str, ...], arrays: dict[tuple[str, ...], int]) -> Loc:
    """A header's key path with the current index after each array of tables on it (`steps`, 0, `arguments`)."""
    path: list[str | int] = []
    for i in range(len(names)):
        path.append(names[i])
        if names[: i + 1] in arrays:
            path.append(arrays[names[: i + 1]])
    return tuple(path)


def _parts(key: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in re.findall(_PART, key))

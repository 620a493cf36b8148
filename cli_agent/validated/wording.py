"""One wording for a value that fails its check (`checked`), in the words of a TOML file:

    max_steps: expected an integer, found string 'many'
    local.thread: unknown key (did you mean 'local.threads'?)
    facts[1].text: missing required key
    mcp_servers.docs: url must start with http:// or https://, got 'ftp://x'   (a check of the class's own)

`problem_of(exc, cls, data)` is the first problem of a pydantic ValidationError as a `Problem`: the key path in the
data (pydantic's names for the members of a union left out) and the message. `cli_agent.validated.reader` puts the
file and the line in front of it (`path:3: max_steps: ...`); a flag or a variable puts its own name there.
"""

from __future__ import annotations

import dataclasses
import difflib
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import dataclass
from cli_agent.validated.checked import field_names, field_type

if TYPE_CHECKING:
    from pydantic import ValidationError

__all__ = ["Loc", "Problem", "problem_of"]

Loc = tuple[str | int, ...]  # a key path in a file's data: table keys and array indexes

_EXPECTED = {"int_type": "an integer", "int_parsing": "an integer", "int_from_float": "an integer",
             "float_type": "a number", "float_parsing": "a number", "bool_type": "true or false",
             "bool_parsing": "true or false", "string_type": "a string", "list_type": "an array",
             "tuple_type": "an array", "model_type": "a table", "dict_type": "a table",
             "dataclass_type": "a table", "none_required": "nothing"}
_TOML_TYPES = {bool: "boolean", int: "integer", float: "float", str: "string", list: "array", tuple: "array",
               dict: "table"}
_HIDDEN = re.compile(r"key|token|secret|password|authorization", re.IGNORECASE)  # values not to repeat


@dataclass(frozen=True)
class Problem:
    loc: Loc  # where in the data; () for the whole
    message: str

    @property
    def key(self) -> str:
        return dotted(self.loc)

    def __str__(self) -> str:
        return f"{self.key}: {self.message}" if self.loc else self.message


def dotted(loc: Loc) -> str:
    """`steps[0].arguments.path` for ("steps", 0, "arguments", "path")."""
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def problem_of(exc: ValidationError, cls: type, data: Any, *,
               suggest: Callable[[str], str | None] | None = None) -> Problem:
    """The first problem of `exc` (checking `data` as `cls`). `suggest(key)` may word the hint for an unknown key
    (" (did you mean ...)"); else the hint is the closest known key, or the known keys when there are few."""
    located = [(_key_path(err, data), err) for err in exc.errors()]
    loc, first = located[0]
    message = _message(first, [err for where, err in located if where == loc], cls, loc, suggest)
    others = len({where for where, _ in located if where != loc[: len(where)]})  # a container's own: the same
    return Problem(loc, message + (f" (and {others} more)" if others else ""))


def _key_path(err: Mapping[str, Any], data: Any) -> Loc:
    """The error's location as keys of `data`: pydantic's tags for union members (`int`, `literal[...]`) left out."""
    node, path, loc = data, [], err["loc"]
    for i, part in enumerate(loc):
        if _has(node, part):
            path.append(part)
            node = node[part]
        elif i == len(loc) - 1 and err["type"] == "missing":
            path.append(part)
    return tuple(path)


def _has(node: Any, part: Any) -> bool:
    if isinstance(node, Mapping):
        return part in node
    return isinstance(node, list | tuple) and isinstance(part, int) and 0 <= part < len(node)


def _message(err: Mapping[str, Any], same: list[Mapping[str, Any]], cls: type, loc: Loc,
             suggest: Callable[[str], str | None] | None) -> str:
    kind = err["type"]
    if kind == "extra_forbidden":
        return "unknown key" + ((suggest and suggest(dotted(loc))) or _hint(cls, loc))
    if kind == "missing":
        return "missing required key"
    if kind in ("value_error", "assertion_error"):
        return str(err["ctx"]["error"])
    found = _found(err["input"], loc)
    expected = [phrase for phrase in map(_expected, same) if phrase]
    if not expected or _expected(err) is None:
        return f"{err['msg'][:1].lower()}{err['msg'][1:]}, found {found}"
    wanted = list(dict.fromkeys(e for e in expected if e != "nothing")) or ["nothing"]
    listed = wanted[0] if len(wanted) == 1 else ", ".join(wanted[:-1]) + " or " + wanted[-1]
    return f"expected {listed}, found {found}"


def _expected(err: Mapping[str, Any]) -> str | None:
    if err["type"] in _EXPECTED:
        return _EXPECTED[err["type"]]
    if err["type"] == "literal_error":
        return "one of " + str(err["ctx"]["expected"])
    rest = str(err["msg"])
    if not rest.startswith("Input should be "):
        return None
    rest = rest.removeprefix("Input should be ")
    return rest if rest.startswith(("a ", "an ")) else "a value " + rest


def _found(value: Any, loc: Loc) -> str:
    found = _TOML_TYPES.get(type(value), type(value).__name__)
    if isinstance(value, dict | list | tuple) or any(_HIDDEN.search(str(part)) for part in loc):
        return found
    shown = repr(value)
    return f"{found} {shown if len(shown) <= 40 else shown[:37] + '...'}"


def _hint(cls: type, loc: Loc) -> str:
    names = _names_at(cls, loc[:-1])
    if not names:
        return ""
    close = difflib.get_close_matches(str(loc[-1]), names, n=1)
    if close:
        return f" (did you mean '{dotted((*loc[:-1], close[0]))}'?)"
    return f" (expected one of: {', '.join(names)})" if len(names) <= 15 else ""


def _names_at(cls: type, path: Loc) -> tuple[str, ...]:
    """The keys a checked dataclass at `path` (under `cls`) takes, or () if there is none there."""
    hint: Any = cls
    for part in path:
        hint = _unwrap(hint)
        if dataclasses.is_dataclass(hint) and isinstance(hint, type):
            if part not in field_names(hint):
                return ()
            hint = field_type(hint, str(part))
        else:
            args = [arg for arg in typing.get_args(hint) if arg is not Ellipsis]
            if not args:
                return ()
            hint = args[-1]  # list[X], tuple[X, ...], dict[str, X]: the items
    hint = _unwrap(hint)
    return field_names(hint) if isinstance(hint, type) and dataclasses.is_dataclass(hint) else ()


def _unwrap(hint: Any) -> Any:
    """`X` for `X | None`; the dataclass of a union that holds one."""
    if typing.get_origin(hint) in (types.UnionType, typing.Union):
        members = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        classes = [m for m in members if isinstance(m, type) and dataclasses.is_dataclass(m)]
        return classes[0] if classes else (_unwrap(members[0]) if len(members) == 1 else hint)
    return hint

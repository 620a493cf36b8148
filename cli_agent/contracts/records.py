"""`dataclass`: the standard library's, with the same arguments and the same classes, made without compiling code.

Python 3.11's `dataclasses.dataclass` writes the source of `__init__`, `__repr__`, `__eq__` and, for a frozen
class, `__hash__`, `__setattr__` and `__delattr__`, and compiles each one: about 0.45 ms a frozen class. A one-shot
run creates some 130 classes, and that compiling was half of its instructions. This decorator lets the standard
library collect the fields (`fields`, `replace`, `asdict`, `is_dataclass` and `__match_args__` are its own) and gives
each class the same methods as closures over its fields, about a tenth of the cost. What the methods do, and the
errors they raise, are the standard library's (tests/unit/contracts/test_records.py holds each against it).

A class asks for anything else (`slots`, `order`, `unsafe_hash`, an `InitVar`): the standard library makes it.
"""

from __future__ import annotations

import dataclasses
import inspect
import operator
import reprlib
from collections.abc import Callable
from typing import Any, TypeVar, cast, dataclass_transform, overload

__all__ = ["dataclass"]

_T = TypeVar("_T", bound=type)
_MISSING: Any = dataclasses.MISSING


@overload
def dataclass(cls: _T, /) -> _T: ...


@overload
def dataclass(*, frozen: bool = False, kw_only: bool = False, repr: bool = True, eq: bool = True,
              slots: bool = False) -> Callable[[_T], _T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def dataclass(cls: _T | None = None, /, *, frozen: bool = False, kw_only: bool = False, repr: bool = True,
              eq: bool = True, slots: bool = False) -> _T | Callable[[_T], _T]:
    """`dataclasses.dataclass(cls, frozen=..., kw_only=..., repr=..., eq=..., slots=...)`, made as the module says."""

    def wrap(klass: _T) -> _T:
        if slots or "InitVar" in str(inspect.get_annotations(klass)):
            return cast(_T, dataclasses.dataclass(klass, frozen=frozen, kw_only=kw_only, repr=repr, eq=eq, slots=slots))
        return _made(klass, frozen=frozen, kw_only=kw_only, repr=repr, eq=eq)

    return wrap if cls is None else wrap(cls)


def _made(cls: _T, *, frozen: bool, kw_only: bool, repr: bool, eq: bool) -> _T:
    own = dict(cls.__dict__)
    if frozen and ("__setattr__" in own or "__delattr__" in own):
        raise TypeError(f"Cannot overwrite attribute __setattr__ in class {cls.__name__}")
    dataclasses.dataclass(cls, init=False, repr=False, eq=False, kw_only=kw_only)  # the same class, its fields set
    fields = dataclasses.fields(cls)
    if "__init__" not in own:
        cls.__init__ = _init(cls, fields, frozen)  # type: ignore[misc]
    if repr and "__repr__" not in own:
        cls.__repr__ = _repr(fields)  # type: ignore[assignment]
    compared = tuple(f.name for f in fields if f.compare)
    if eq and "__eq__" not in own:
        cls.__eq__ = _eq(compared)  # type: ignore[assignment]
    explicit_hash = "__hash__" in own and not (own["__hash__"] is None and "__eq__" in own)
    if eq and not explicit_hash:
        hashed = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        cls.__hash__ = _hash(hashed) if frozen else None  # type: ignore[assignment]
    if frozen:
        names = frozenset(f.name for f in fields)
        cls.__setattr__ = _frozen(cls, names, "assign to")  # type: ignore[assignment]
        cls.__delattr__ = _frozen(cls, names, "delete")  # type: ignore[assignment]
    return cls


def _init(cls: type, fields: tuple[dataclasses.Field[Any], ...], frozen: bool) -> Callable[..., None]:
    """The class's `__init__`: its init fields by position (the keyword-only ones by keyword), defaults and default
    factories, then the fields outside `__init__` from their defaults, then `__post_init__`."""
    taken = [f for f in fields if f.init]
    positional = tuple(f.name for f in taken if not f.kw_only)
    keyword_only = tuple(f.name for f in taken if f.kw_only)
    _check_order(cls, [f for f in taken if not f.kw_only])
    default = {f.name: f.default for f in fields if f.default is not _MISSING}
    factory: dict[str, Callable[[], Any]] = {f.name: cast(Callable[[], Any], f.default_factory) for f in fields
                                             if f.default_factory is not _MISSING}
    outside = tuple(f.name for f in fields if not f.init and (f.name in default or f.name in factory))
    optional = frozenset(default) | frozenset(factory)
    post_init = hasattr(cls, "__post_init__")
    put = object.__setattr__ if frozen else setattr
    where = f"{cls.__qualname__}.__init__()"

    names = frozenset(positional + keyword_only)
    order = positional + keyword_only + outside

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        given = dict(zip(positional, args, strict=False))  # fewer args than positional fields is the usual call
        if len(args) > len(positional) or (kwargs and (not names.issuperset(kwargs) or not given.keys().isdisjoint(
                kwargs))):
            raise TypeError(_wrong_call(where, positional, keyword_only, optional, args, kwargs))
        given.update(kwargs)
        for name in order:
            if name in given:
                put(self, name, given[name])
            elif name in default:
                put(self, name, default[name])
            elif name in factory:
                put(self, name, factory[name]())
            else:
                raise TypeError(_wrong_call(where, positional, keyword_only, optional, args, kwargs))
        if post_init:
            self.__post_init__()

    __init__.__qualname__ = f"{cls.__qualname__}.__init__"
    return __init__


def _wrong_call(where: str, positional: tuple[str, ...], keyword_only: tuple[str, ...], optional: frozenset[str],
                args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    """What is wrong with a call of `__init__`, in Python's own words and order ("" when nothing is)."""
    for name in kwargs:
        if name not in positional and name not in keyword_only:
            return f"{where} got an unexpected keyword argument '{name}'"
        if name in positional[:len(args)]:
            return f"{where} got multiple values for argument '{name}'"
    if len(args) > len(positional):
        defaults = sum(name in optional for name in positional)
        takes = len(positional) + 1  # self
        said = f"from {takes - defaults} to {takes}" if defaults else str(takes)
        plural = "s" if defaults or takes != 1 else ""
        given = len(args) + 1
        keywords = sum(name in kwargs for name in keyword_only)
        more = (f" positional argument{'s' if given != 1 else ''} (and {_count(keywords, 'keyword-only argument')})"
                if keywords else "")
        verb = "was" if given == 1 and not keywords else "were"
        return f"{where} takes {said} positional argument{plural} but {given}{more} {verb} given"
    for kind, names in (("positional", positional[len(args):]), ("keyword-only", keyword_only)):
        missing = [n for n in names if n not in kwargs and n not in optional]
        if missing:
            return f"{where} missing {_count(len(missing), f'required {kind} argument')}: {_listed(missing)}"
    return ""


def _check_order(cls: type, positional: list[dataclasses.Field[Any]]) -> None:
    """The standard library's check: a positional field without a default after one with a default."""
    seen_default = False
    for f in positional:
        if f.default is not _MISSING or f.default_factory is not _MISSING:
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default argument {f.name!r} follows default argument")


def _repr(fields: tuple[dataclasses.Field[Any], ...]) -> Callable[[Any], str]:
    shown = tuple(f.name for f in fields if f.repr)

    @reprlib.recursive_repr()
    def __repr__(self: Any) -> str:
        inner = ", ".join(f"{name}={getattr(self, name)!r}" for name in shown)
        return f"{self.__class__.__qualname__}({inner})"

    return __repr__


def _values(names: tuple[str, ...]) -> Callable[[Any], tuple[Any, ...]]:
    """The tuple of an instance's `names`, read by `operator.attrgetter` (C code): `(a, b)` as the standard library's
    methods write it, a 1-tuple for one name."""
    if len(names) > 1:
        return operator.attrgetter(*names)
    if names:
        one = operator.attrgetter(names[0])
        return lambda self: (one(self),)
    return lambda self: ()


def _eq(compared: tuple[str, ...]) -> Callable[[Any, Any], Any]:
    values = _values(compared)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _hash(hashed: tuple[str, ...]) -> Callable[[Any], int]:
    values = _values(hashed)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _frozen(owner: type[Any], names: frozenset[str], verb: str) -> Callable[..., None]:
    """`__setattr__` (verb "assign to") or `__delattr__` ("delete") of a frozen class: a field, or any attribute of
    the class itself, raises FrozenInstanceError; a subclass's own attributes go through."""
    if verb == "assign to":
        def __setattr__(self: Any, name: str, value: Any) -> None:
            if type(self) is owner or name in names:
                raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")
            super(owner, self).__setattr__(name, value)

        return __setattr__

    def __delattr__(self: Any, name: str) -> None:
        if type(self) is owner or name in names:
            raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")
        super(owner, self).__delattr__(name)

    return __delattr__


def _count(n: int, what: str) -> str:
    return f"{n} {what}" if n == 1 else f"{n} {what}s"


def _listed(names: list[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) == 1:
        return quoted[0]
    if len(quoted) == 2:
        return f"{quoted[0]} and {quoted[1]}"
    return ", ".join(quoted[:-1]) + f", and {quoted[-1]}"

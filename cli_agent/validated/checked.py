"""Plain frozen dataclasses for the values that files describe (settings, tool specs, facts), checked by pydantic
only when a value needs checking.

Importing pydantic and building its models costs about a quarter of a one-shot run, and most runs check nothing: no
config file exists, the packaged tool specs passed their checks before (`registry.load_remembered`), no facts file
exists. So the classes are dataclasses, and each one's pydantic model is derived from it on first use:

    @dataclass(frozen=True, kw_only=True)
    class Example:
        name: str = rule(pattern=r"^[a-z]+$", strict=True)   # constraints as pydantic's Field takes them
        size: int = rule(default=1, ge=1)
        tags: tuple[str, ...] = ()

    value = check(Example, {"name": "x"})    # an Example; pydantic.ValidationError if the data is wrong

`rule(before=f)` and `rule(after=f)` add pydantic's BeforeValidator/AfterValidator; `rule(alias="break")` reads
the field from a key that is no Python name. A class's `check_whole(self)`, if it has one, runs after its fields are
checked and raises ValueError for a problem between them. A field typed with another checked dataclass (or a
tuple, list, dict or union of them) is checked as its own model; `Secret` is pydantic's SecretStr. A checked model
forbids unknown keys; an `unchecked(default)` field is not a key at all (files can't set it: where a value came
from). `cli_agent.validated.reader` reads a file and words what is wrong with it.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["Secret", "check", "field_names", "field_type", "plainly_valid", "rule", "unchecked"]

T = TypeVar("T")
_CHECK = "cli_agent.validated.checked"  # the key of a field's metadata that holds its constraints
_UNCHECKED = "cli_agent.validated.unchecked"  # a field's metadata key: not a key of the file


class Secret:
    """A string that is never shown by `repr` or `str` (an API key); `get_secret_value()` is the string."""

    __slots__ = ("_value",)

    def __init__(self, value: str) -> None:
        self._value = value

    def get_secret_value(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return "Secret('**********')"

    __str__ = __repr__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Secret) and other._value == self._value

    def __hash__(self) -> int:
        return hash(self._value)


def rule(default: Any = dataclasses.MISSING, *, factory: Callable[[], Any] | None = None, **constraints: Any) -> Any:
    """A dataclass field with pydantic `Field` constraints (`ge`, `pattern`, `min_length`, `strict`...) and
    optional `before`/`after` validators, applied when the value is checked."""
    metadata = {_CHECK: constraints}
    if factory is not None:
        return dataclasses.field(default_factory=factory, metadata=metadata)
    return dataclasses.field(default=default, metadata=metadata)


def unchecked(default: Any) -> Any:
    """A field that is not a key of the data (files can't set it); it keeps `default` when checked."""
    return dataclasses.field(default=default, compare=False, metadata={_UNCHECKED: True})


def field_names(cls: type) -> tuple[str, ...]:
    """The keys of the data: the fields, `unchecked` ones aside."""
    return tuple(f.name for f in _fields(cls))


@functools.cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if not f.metadata.get(_UNCHECKED))


def field_type(cls: type, name: str) -> Any:
    """The field's type as its annotation says (the string annotations evaluated)."""
    return _hints(cls)[name]


def plainly_valid(cls: type, name: str, value: Any) -> bool:
    """True when `value` is valid for the field without asking pydantic: a str for a field typed `str` (or
    `str | None`), one of a `Literal`'s strings, a bool for a `bool` field, with no constraints on the field.
    False means "check it"."""
    field = next(f for f in dataclasses.fields(cls) if f.name == name)
    if field.metadata.get(_CHECK):
        return False
    hint = field_type(cls, name)
    if type(value) is bool:
        return hint is bool
    if type(value) is str and typing.get_origin(hint) is typing.Literal:
        return value in typing.get_args(hint)
    return type(value) is str and hint in (str, str | None)


def check(cls: type[T], data: Mapping[str, Any], *, strict: bool = False) -> T:
    """`data` as a `cls`, checked by the pydantic model derived from it; raises pydantic.ValidationError."""
    model: Any = _model(cls)  # type: ignore[arg-type]  # a class is hashable
    checked = model.model_validate(data, strict=strict or None)  # False would undo the fields' own strictness
    return typing.cast(T, _plain(checked))


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


@functools.cache
def _model(cls: type) -> Any:
    # deferred: pydantic (40 ms), only when a config file is checked
    from pydantic import AfterValidator, BeforeValidator, ConfigDict, Field, create_model, model_validator

    fields: dict[str, Any] = {}
    for field in _fields(cls):
        constraints = dict(field.metadata.get(_CHECK, {}))
        hint = _translate(field_type(cls, field.name))
        validators: list[Any] = [BeforeValidator(constraints.pop("before"))] if "before" in constraints else []
        validators += [AfterValidator(constraints.pop("after"))] if "after" in constraints else []
        if validators:
            hint = typing.Annotated[hint, *validators]
        if field.default_factory is not dataclasses.MISSING:
            spec = Field(default_factory=field.default_factory, **constraints)
        elif field.default is not dataclasses.MISSING:
            spec = Field(default=field.default, **constraints)
        else:
            spec = Field(**constraints)
        fields[field.name] = (hint, spec)
    whole = getattr(cls, "check_whole", None)
    checks: dict[str, Any] | None = {"check_whole": model_validator(mode="after")(_whole_check(whole))} \
        if whole else None
    model = create_model(cls.__name__, __config__=ConfigDict(extra="forbid", frozen=True),
                         __validators__=checks, **fields)
    _PLAIN_OF[model] = cls
    return model


def _whole_check(check_whole: Callable[[Any], None]) -> Callable[[Any], Any]:
    def checked(model: Any) -> Any:
        check_whole(model)  # the model has the dataclass's fields, so its method reads them alike
        return model

    return checked


_PLAIN_OF: dict[type, type] = {}  # a derived pydantic model -> its dataclass


def _translate(hint: Any) -> Any:
    """The type as pydantic checks it: checked dataclasses become their models, `Secret` pydantic's SecretStr."""
    if hint is Secret:
        from pydantic import SecretStr  # deferred: pydantic (40 ms), only when a config file is checked

        return SecretStr
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        return _model(hint)
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is None or origin is typing.Literal or origin is typing.Annotated or not args:
        return hint
    translated = tuple(_translate(arg) for arg in args)
    if origin is tuple:  # a TOML array is a list: taken as the tuple even when checked strictly
        from pydantic import BeforeValidator  # deferred: pydantic (40 ms), only when a config file is checked

        return typing.Annotated[tuple[translated], BeforeValidator(_as_tuple)]  # type: ignore[valid-type]
    if translated == args:
        return hint
    if origin in (types.UnionType, typing.Union):
        return typing.Union[translated]  # noqa: UP007 - built from a tuple
    return origin[translated]


def _as_tuple(value: Any) -> Any:
    return tuple(value) if isinstance(value, list) else value


def _plain(value: Any) -> Any:
    """A checked value as the dataclasses hold it: derived models as their dataclasses, SecretStr as Secret. Only
    the fields whose type holds a model or a secret are walked (a tool's `parameters`, a deep JSON Schema, is not)."""
    cls = _PLAIN_OF.get(type(value))
    if cls is not None:
        return cls(**{name: _plain(getattr(value, name)) if _converted(cls, name) else getattr(value, name)
                      for name in field_names(cls)})
    if isinstance(value, tuple | list):
        return type(value)(_plain(item) for item in value)
    if isinstance(value, dict):
        return {key: _plain(item) for key, item in value.items()}
    from pydantic import SecretStr  # deferred: pydantic (40 ms), only when a config file is checked

    return Secret(value.get_secret_value()) if isinstance(value, SecretStr) else value


@functools.cache
def _converted(cls: type, name: str) -> bool:
    """Whether the field's checked value differs in kind from the dataclass's (a model, a secret inside it)."""
    hint = field_type(cls, name)
    return _translate(hint) is not hint

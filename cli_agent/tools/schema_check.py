"""Checking a call's arguments against its tool's JSON Schema, in bounded time.

    problems = check(schema, arguments, until=deadline)   # jsonschema's errors; CheckStopped past `until`

An MCP server writes its own schemas, and the model writes the arguments, so neither may make the check slow.
jsonschema runs a schema's `pattern` (and `patternProperties`, and the patterns `additionalProperties` consults)
with Python's `re`, where `^(a+)+$` against 31 characters backtracks for a minute without releasing the GIL. Here
those keywords match with the `regex` module instead, which stops a match after a time limit: each match gets at
most `PATTERN_BUDGET_S`, the whole check at most `CHECK_BUDGET_S`, and neither goes past the run's deadline. Every
other keyword checks the clock before it starts, so a schema whose combinators multiply the work stops too.
A pattern that cannot be settled in time refuses the argument. A schema that mixes `unevaluatedProperties` with
`patternProperties` (jsonschema would match those with `re`) is refused when its tool is listed
(`unbounded_keywords`).
"""

from __future__ import annotations

import functools
import json
import math
import time
from collections.abc import Callable, Iterator, Mapping
from contextvars import ContextVar
from typing import Any

__all__ = ["unbounded_keywords"]

CHECK_BUDGET_S = 1.0
PATTERN_BUDGET_S = 0.1

_until: ContextVar[float] = ContextVar("schema_check_until", default=math.inf)


class CheckStopped(Exception):
    """The check ran out of time; `str()` says where, in one line."""


def check(schema: Mapping[str, Any], arguments: Any, *, until: float | None = None) -> list[Any]:
    """jsonschema's errors for `arguments` (sorted by path); CheckStopped when the check took more than
    CHECK_BUDGET_S or reached `until` (time.monotonic())."""
    stop = time.monotonic() + CHECK_BUDGET_S
    token = _until.set(stop if until is None else min(stop, until))
    try:
        validator = _validator(json.dumps(schema, sort_keys=True))
        return sorted(validator.iter_errors(arguments), key=lambda e: list(e.absolute_path))
    finally:
        _until.reset(token)


def unbounded_keywords(schema: Any) -> str | None:
    """Why `schema` cannot be checked in bounded time, or None."""
    text = json.dumps(schema)
    if '"unevaluatedProperties"' in text and '"patternProperties"' in text:
        return "unevaluatedProperties together with patternProperties is not supported"
    return None


def _left() -> float:
    left = _until.get() - time.monotonic()
    if left <= 0:
        raise CheckStopped("the check of the arguments ran out of time")
    return left


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> Any:
    import regex  # deferred: only for a pattern matched with a time limit

    return regex.compile(pattern)


def _search(pattern: str, text: str) -> bool:
    try:
        compiled = _compiled(pattern)
    except Exception:
        raise CheckStopped(f"the schema's pattern {pattern[:60]!r} cannot be used") from None
    try:
        return compiled.search(text, timeout=min(PATTERN_BUDGET_S, _left())) is not None
    except TimeoutError:
        raise CheckStopped(f"matching the pattern {pattern[:60]!r} took too long (over "
                           f"{PATTERN_BUDGET_S:g} s), so the argument is refused") from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError  # deferred: jsonschema (40 ms), only for what the fast checks leave

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{instance[:80]!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _additional_properties(validator: Any, additional: Any, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema import ValidationError  # deferred: jsonschema (40 ms), only for what the fast checks leave

    if not validator.is_type(instance, "object"):
        return
    known, patterns = schema.get("properties", {}), list(schema.get("patternProperties", {}))
    extras = [key for key in instance if key not in known and not any(_search(p, key) for p in patterns)]
    if validator.is_type(additional, "object"):
        for extra in extras:
            yield from validator.descend(instance[extra], additional, path=extra)
    elif not additional and extras:
        names = ", ".join(repr(e) for e in sorted(extras, key=str))
        yield ValidationError(f"Additional properties are not allowed ({names} "
                              f"{'was' if len(extras) == 1 else 'were'} unexpected)")


def _timed(keyword: Callable[..., Any]) -> Callable[..., Iterator[Any]]:
    def timed(validator: Any, value: Any, instance: Any, schema: Any) -> Iterator[Any]:
        _left()
        errors = keyword(validator, value, instance, schema)
        if errors is not None:
            yield from errors

    return timed


@functools.lru_cache(maxsize=256)
def _validator(schema_json: str) -> Any:
    import jsonschema  # deferred: jsonschema (40 ms), only for what the fast checks leave

    schema = json.loads(schema_json)
    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    keywords = {name: _timed(fn) for name, fn in base.VALIDATORS.items()}
    ours: dict[str, Callable[..., Any]] = {"pattern": _pattern, "patternProperties": _pattern_properties,
            "additionalProperties": _additional_properties}
    keywords.update({name: _timed(fn) for name, fn in ours.items() if name in base.VALIDATORS})
    return jsonschema.validators.extend(base, keywords)(schema)

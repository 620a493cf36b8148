"""`checked`: plain frozen dataclasses, checked by the pydantic model derived from each on first use."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import FrozenInstanceError, dataclass, field
from typing import Literal

import pytest
from pydantic import ValidationError

from cli_agent.validated.checked import Secret, check, field_names, field_type, plainly_valid, rule, unchecked


def _upper_ok(names: list[str]) -> list[str]:
    if any(n != n.upper() for n in names):
        raise ValueError("names must be upper case")
    return names


@dataclass(frozen=True, kw_only=True)
class Inner:
    size: int = rule(1, ge=1)
    names: list[str] = rule(factory=list, after=_upper_ok)


@dataclass(frozen=True, kw_only=True)
class Outer:
    name: str = rule(pattern=r"^[a-z]+$", strict=True)
    mode: Literal["a", "b"] = "a"
    note: str | None = None
    flag: bool = False
    key: Secret | None = None
    when: str = rule("", before=lambda v: v.isoformat() if hasattr(v, "isoformat") else v)
    inner: Inner = field(default_factory=Inner)
    many: tuple[Inner, ...] = ()


def test_data_becomes_the_dataclasses_nested_and_secret():
    import datetime

    value = check(Outer, {"name": "abc", "mode": "b", "key": "sk-123", "when": datetime.date(2026, 1, 2),
                          "inner": {"size": "3", "names": ["X"]}, "many": [{"size": 2}, {}]})
    assert value == Outer(name="abc", mode="b", key=Secret("sk-123"), when="2026-01-02",
                          inner=Inner(size=3, names=["X"]), many=(Inner(size=2), Inner()))
    assert type(value.inner) is Inner and type(value.many) is tuple and "sk-123" not in repr(value)
    assert value.key is not None and value.key.get_secret_value() == "sk-123"
    with pytest.raises(FrozenInstanceError):
        value.name = "x"  # type: ignore[misc]


@pytest.mark.parametrize(("data", "where"), [
    ({"name": "abc", "nope": 1}, "nope"),                     # unknown key
    ({"name": "ABC"}, "name"),                                # pattern
    ({"name": 5}, "name"),                                    # a strict field takes no number
    ({}, "name"),                                             # missing
    ({"name": "a", "mode": "c"}, "mode"),                     # literal
    ({"name": "a", "inner": {"size": 0}}, "inner.size"),      # constraint in a nested dataclass
    ({"name": "a", "inner": {"names": ["x"]}}, "inner.names"),  # an after validator
    ({"name": "a", "many": [{"size": 1}, {"bad": 1}]}, "many.1.bad"),
])
def test_bad_data_is_refused_where_it_is_wrong(data, where):
    with pytest.raises(ValidationError) as info:
        check(Outer, data)
    assert ".".join(str(p) for p in info.value.errors()[0]["loc"]) == where


def test_strict_checking_takes_no_conversions_but_lax_does():
    assert check(Inner, {"size": "4"}).size == 4
    with pytest.raises(ValidationError):
        check(Inner, {"size": "4"}, strict=True)


@dataclass(frozen=True, kw_only=True)
class Pair:
    low: int = 0
    high: int = 1
    tags: tuple[str, ...] = ()
    first: tuple[Inner, ...] = rule((), alias="break")  # a key that is no Python name
    origin: str = unchecked("file")  # not a key: set by the code that read it

    def check_whole(self) -> None:
        if self.low > self.high:
            raise ValueError("low must not be above high")


def test_a_class_checks_its_fields_together_and_reads_an_alias():
    assert check(Pair, {"low": 1, "high": 2, "break": [{"size": 2}]}).first == (Inner(size=2),)
    with pytest.raises(ValidationError) as info:
        check(Pair, {"low": 3, "high": 2})
    assert info.value.errors()[0]["loc"] == () and "low must not be above high" in str(info.value)
    with pytest.raises(ValidationError):
        check(Pair, {"first": []})  # only by its key in the file


def test_an_unchecked_field_is_no_key_and_keeps_its_default():
    assert field_names(Pair) == ("low", "high", "tags", "first")
    assert check(Pair, {}).origin == "file"
    with pytest.raises(ValidationError):
        check(Pair, {"origin": "elsewhere"})


def test_a_toml_array_is_a_tuple_even_when_checked_strictly():
    assert check(Pair, {"tags": ["a", "b"]}, strict=True).tags == ("a", "b")
    with pytest.raises(ValidationError):
        check(Pair, {"tags": "ab"}, strict=True)


def test_plainly_valid_is_only_the_obvious_cases():
    assert plainly_valid(Outer, "note", "text") and plainly_valid(Outer, "flag", True)
    assert not plainly_valid(Outer, "name", "abc")  # constrained: pydantic checks it
    assert not plainly_valid(Outer, "flag", "yes") and not plainly_valid(Outer, "note", 5)
    assert plainly_valid(Outer, "mode", "a") and not plainly_valid(Outer, "mode", "c")
    assert not plainly_valid(Outer, "key", "sk")
    assert field_names(Inner) == ("size", "names") and field_type(Outer, "note") == (str | None)


@pytest.mark.slow
def test_the_classes_import_no_pydantic():
    code = ("import sys, cli_agent.config.settings, cli_agent.tools.specs, cli_agent.facts.store; "
            "print('pydantic' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert result.stdout.strip() == "False", result.stderr[-2000:]

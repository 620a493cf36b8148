"""`cli_agent.contracts.dataclass` against the standard library's: the same classes are made by both, and every
call, comparison, hash, repr, assignment and helper gives the same result or the same error message."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_agent.contracts import dataclass as ours


def made_by(dc: Any) -> dict[str, type]:
    """One set of classes, made by `dc` (ours or the standard library's), for a side-by-side comparison."""

    @dc(frozen=True)
    class Point:
        """A point."""

        x: int
        y: int = 0
        tags: tuple[str, ...] = ()

    @dc
    class Bag:
        items: list[int] = dataclasses.field(default_factory=list)
        note: str = dataclasses.field(default="", compare=False)
        secret: str = dataclasses.field(default="s", repr=False)

    @dc(frozen=True, kw_only=True)
    class Options:
        """Keyword-only."""

        name: str
        size: int
        level: int = 1

    @dc(frozen=True)
    class Base:
        """A frozen base."""

        a: int

    @dc(frozen=True)
    class Derived(Base):
        """A frozen class on it."""

        b: int = 2
        c: tuple[int, ...] = ()

    @dc(frozen=True)
    class Mixed:
        """Fields outside __init__, and one keyword-only field among positional ones."""

        a: int
        b: int = dataclasses.field(default=5, kw_only=True)
        c: str = "c"
        d: list[int] = dataclasses.field(default_factory=list, init=False, compare=False)
        e: int = dataclasses.field(default=9, init=False)

    @dc(frozen=True)
    class Posted:
        """A __post_init__ that sets a derived field."""

        a: int
        twice: int = dataclasses.field(default=0, init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "twice", self.a * 2)

    @dc(frozen=True)
    class Own:
        """Its own repr, eq and hash stay."""

        a: int

        def __repr__(self) -> str:
            return f"<own {self.a}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Own) and str(other.a)[:1] == str(self.a)[:1]

        def __hash__(self) -> int:
            return hash(str(self.a)[:1])

    @dc
    class Mutable:
        """Not frozen: eq, and no hash."""

        a: int
        b: list[int] = dataclasses.field(default_factory=list)

    @dc(frozen=True, eq=False, repr=False)
    class Plain:
        """No eq, no repr: identity and object's repr."""

        a: int

    return {c.__name__: c for c in (Point, Bag, Options, Base, Derived, Mixed, Posted, Own, Mutable, Plain)}


OURS, STDLIB = made_by(ours), made_by(dataclasses.dataclass)
NAMES = sorted(OURS)


def outcome(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> tuple[Any, ...]:
    """What making `cls(*args, **kwargs)` gives, as plain data that two twin classes must share."""
    try:
        made = cls(*args, **kwargs)
    except TypeError as exc:
        return ("error", str(exc))
    values = tuple(getattr(made, f.name) for f in dataclasses.fields(made))
    hashed: Any
    try:
        hashed = hash(made)
    except TypeError as exc:
        hashed = ("unhashable", str(exc))
    shown = repr(made) if cls.__repr__ is not object.__repr__ else "object repr"
    if cls.__hash__ is object.__hash__ and cls.__eq__ is object.__eq__:
        hashed = "identity"
    return ("made", values, shown, hashed, made == copy.copy(made), dataclasses.asdict(made))


values = st.one_of(st.integers(-3, 3), st.text("ab", max_size=2), st.lists(st.integers(0, 2), max_size=2))
keys = st.sampled_from(["x", "y", "tags", "items", "note", "secret", "name", "size", "level", "a", "b", "c", "d",
                        "e", "twice", "nope"])


@settings(max_examples=400, deadline=None)
@given(name=st.sampled_from(NAMES), args=st.lists(values, max_size=5).map(tuple),
       kwargs=st.dictionaries(keys, values, max_size=4))
def test_any_call_makes_the_same_instance_or_raises_the_same_error(name, args, kwargs):
    assert outcome(OURS[name], args, kwargs) == outcome(STDLIB[name], args, kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_the_helpers_of_the_standard_library_see_the_same_class(name):
    mine, theirs = OURS[name], STDLIB[name]
    assert dataclasses.is_dataclass(mine)
    assert [(f.name, f.init, f.kw_only, f.compare, f.repr) for f in dataclasses.fields(mine)] == \
        [(f.name, f.init, f.kw_only, f.compare, f.repr) for f in dataclasses.fields(theirs)]
    assert getattr(mine, "__match_args__", None) == getattr(theirs, "__match_args__", None)
    assert (mine.__hash__ is None) == (theirs.__hash__ is None)
    assert mine.__doc__ == theirs.__doc__ or theirs.__doc__.startswith(name + "(")  # only an undocumented class differs


def test_replace_and_match_work_on_them():
    point = OURS["Point"](1, tags=("t",))
    moved = dataclasses.replace(point, y=4)
    assert moved == OURS["Point"](1, 4, ("t",)) and moved != point
    point_class = OURS["Point"]
    match moved:
        case point_class(x, y):  # type: ignore[misc]
            assert (x, y) == (1, 4)
        case _:
            pytest.fail("no match")
    with pytest.raises(TypeError) as mine:
        dataclasses.replace(point, nope=1)
    with pytest.raises(TypeError) as theirs:
        dataclasses.replace(STDLIB["Point"](1), nope=1)
    assert str(mine.value) == str(theirs.value)


@pytest.mark.parametrize("name", ["Point", "Derived", "Mixed"])
def test_a_frozen_instance_refuses_the_same_changes(name):
    def tried(cls: type, change: Any) -> str:
        made = cls(1)
        try:
            change(made)
        except (dataclasses.FrozenInstanceError, AttributeError) as exc:
            return f"{type(exc).__name__}: {exc}"
        return "changed"

    for change in (lambda o: setattr(o, "a", 3), lambda o: setattr(o, "x", 3), lambda o: setattr(o, "new", 1),
                   lambda o: delattr(o, "a"), lambda o: delattr(o, "x"), lambda o: delattr(o, "new")):
        assert tried(OURS[name], change) == tried(STDLIB[name], change)


def test_a_plain_subclass_may_set_its_own_attributes_but_not_the_fields():
    for made in (OURS, STDLIB):
        class Sub(made["Point"]):  # type: ignore[misc,valid-type]
            pass

        sub = Sub(1)
        sub.extra = 5
        assert sub.extra == 5
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'x'"):
            sub.x = 2


def test_a_required_field_after_a_default_is_refused_as_the_standard_library_refuses_it():
    errors = []
    for dc in (ours, dataclasses.dataclass):
        with pytest.raises(TypeError) as caught:
            @dc(frozen=True)
            class Wrong:
                a: int = 0
                b: int  # type: ignore[misc]
        errors.append(str(caught.value))
    assert errors[0] == errors[1]


def test_a_self_referencing_instance_repr_stops_as_the_standard_librarys_does():
    shown = []
    for made in (OURS, STDLIB):
        bag = made["Bag"]()
        bag.items.append(bag)
        shown.append(repr(bag))
    assert shown[0] == shown[1] == "made_by.<locals>.Bag(items=[...], note='')"


@ours(frozen=True)
class Pickled:
    """At module level, so pickle finds it."""

    a: int
    b: tuple[int, ...] = ()


def test_an_instance_pickles_and_copies_deeply():
    item = Pickled(1, (2,))
    assert pickle.loads(pickle.dumps(item)) == item
    assert copy.deepcopy(item) == item


def test_slots_are_left_to_the_standard_library():
    @ours(slots=True)
    class Slotted:
        a: int

    assert Slotted.__slots__ == ("a",)
    assert Slotted(1) == Slotted(1)


def test_the_product_makes_its_dataclasses_with_this_decorator():
    """A start-up cost: each class the standard library's decorator makes compiles four to six functions."""
    root = Path(__file__).resolve().parents[3] / "cli_agent"
    pattern = re.compile(r"^from dataclasses import .*\bdataclass\b|@dataclasses\.dataclass\b", re.MULTILINE)
    stray = [str(p.relative_to(root)) for p in root.rglob("*.py")
             if p.name != "records.py" and pattern.search(p.read_text(encoding="utf-8"))]
    assert stray == [], "use `from cli_agent.contracts import dataclass` (or contracts.records inside contracts)"

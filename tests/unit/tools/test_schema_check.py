"""The check of a call's arguments against a JSON Schema is bounded in time, whatever the schema and arguments.

The bounds are proven without the machine's speed: the check's clock is a counter that moves one step at each
reading (each keyword checks it once), and the `regex` match is seen being given its time limit."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest

from cli_agent.tools import schema_check
from cli_agent.tools.schema_check import CHECK_BUDGET_S, PATTERN_BUDGET_S, CheckStopped, check, unbounded_keywords

STEP_S = 0.001  # what one reading of the stepped clock costs


def string_with(pattern: str) -> dict:
    return {"type": "object", "properties": {"t": {"type": "string", "pattern": pattern}}}


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    """The check's clock: STEP_S more at each reading, and a failure, not a hang, well past the budget."""
    state = SimpleNamespace(now=1000.0, reads=0)

    def monotonic() -> float:
        state.reads += 1
        assert state.reads < 20 * CHECK_BUDGET_S / STEP_S, "the check went on far past its budget"
        state.now += STEP_S
        return state.now

    monkeypatch.setattr(schema_check, "time", SimpleNamespace(monotonic=monotonic))
    return state


def outcome_of(schema: dict, arguments: object, **kw: float) -> object:
    try:
        return check(schema, arguments, **kw)
    except CheckStopped as exc:
        return exc


def test_patterns_still_check_as_before():
    assert check(string_with("^[a-z]+$"), {"t": "abc"}) == []
    [error] = check(string_with("^[a-z]+$"), {"t": "ABC"})
    assert "does not match" in error.message
    pattern_props = {"type": "object", "patternProperties": {"^x_": {"type": "integer"}},
                     "additionalProperties": False}
    assert check(pattern_props, {"x_a": 1}) == []
    assert [e.validator for e in check(pattern_props, {"x_a": "no", "y": 1})] == ["additionalProperties", "type"]


@pytest.mark.parametrize("schema", [
    string_with("^(a|a)*$"),
    {"type": "object", "patternProperties": {"^(a|a)*$": {}}},
    {"type": "object", "patternProperties": {"^(a|a)*$": {}}, "additionalProperties": False},
])
def test_a_backtracking_pattern_is_stopped(schema, monkeypatch):
    limits: list[float] = []
    compiled = schema_check._compiled

    class Timed:  # the compiled pattern, noting the time limit each match is given
        def __init__(self, pattern: str) -> None:
            self.real = compiled(pattern)

        def search(self, text: str, *, timeout: float) -> object:
            limits.append(timeout)
            return self.real.search(text, timeout=timeout)

    monkeypatch.setattr(schema_check, "_compiled", Timed)
    hostile = "a" * 40 + "!"  # 2**40 ways to backtrack: hours without the limit
    started = time.monotonic()
    outcome = outcome_of(schema, {"t": hostile, hostile: 1})
    assert isinstance(outcome, CheckStopped) and "took too long" in str(outcome)
    assert limits and all(0 < limit <= PATTERN_BUDGET_S for limit in limits)
    assert time.monotonic() - started < 60  # only a hang fails here: the limit above is the bound


def test_combinators_that_multiply_the_work_stop_at_the_budget(clock):
    doubling = {"$defs": {"n": {"allOf": [{"type": "array", "items": {"$ref": "#/$defs/n"}},
                                          {"items": {"$ref": "#/$defs/n"}}]}}, "$ref": "#/$defs/n"}
    nested: list = []
    for _ in range(40):
        nested = [nested]
    outcome = outcome_of(doubling, nested)  # 2**40 keywords to check without the budget
    assert isinstance(outcome, CheckStopped)
    assert clock.reads <= CHECK_BUDGET_S / STEP_S + 2  # a keyword reads the clock once, and stops past the budget


def test_the_run_s_deadline_stops_the_check(clock):
    outcome = outcome_of(string_with("^a$"), {"t": "a"}, until=clock.now - 1)
    assert isinstance(outcome, CheckStopped)
    assert clock.reads == 2  # the budget's start, then the first keyword, which stops


def test_a_schema_whose_patterns_jsonschema_would_run_itself_is_refused():
    assert unbounded_keywords({"patternProperties": {"^a": {}}, "unevaluatedProperties": False})
    assert unbounded_keywords(string_with("^a$")) is None

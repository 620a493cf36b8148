"""The check of a call's arguments against a JSON Schema is bounded in time, whatever the schema and arguments."""

from __future__ import annotations

import time

import pytest

from cli_agent.tools.schema_check import CHECK_BUDGET_S, CheckStopped, check, unbounded_keywords


def string_with(pattern: str) -> dict:
    return {"type": "object", "properties": {"t": {"type": "string", "pattern": pattern}}}


def timed(schema: dict, arguments: object, **kw: float) -> tuple[object, float]:
    started = time.monotonic()
    try:
        outcome: object = check(schema, arguments, **kw)
    except CheckStopped as exc:
        outcome = exc
    return outcome, time.monotonic() - started


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
def test_a_backtracking_pattern_is_stopped(schema):
    hostile = "a" * 40 + "!"
    outcome, took = timed(schema, {"t": hostile, hostile: 1})
    assert isinstance(outcome, CheckStopped) and "took too long" in str(outcome)
    assert took < 0.5


def test_combinators_that_multiply_the_work_stop_at_the_budget():
    doubling = {"$defs": {"n": {"allOf": [{"type": "array", "items": {"$ref": "#/$defs/n"}},
                                          {"items": {"$ref": "#/$defs/n"}}]}}, "$ref": "#/$defs/n"}
    nested: list = []
    for _ in range(40):
        nested = [nested]
    outcome, took = timed(doubling, nested)
    assert isinstance(outcome, CheckStopped)
    assert took < CHECK_BUDGET_S + 0.5


def test_the_run_s_deadline_stops_the_check():
    outcome, took = timed(string_with("^a$"), {"t": "a"}, until=time.monotonic() - 1)
    assert isinstance(outcome, CheckStopped) and took < 0.1


def test_a_schema_whose_patterns_jsonschema_would_run_itself_is_refused():
    assert unbounded_keywords({"patternProperties": {"^a": {}}, "unevaluatedProperties": False})
    assert unbounded_keywords(string_with("^a$")) is None

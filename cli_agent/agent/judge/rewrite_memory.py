"""What a whole-definition candidate's rewrites have tried (`Memory`): each wrong version with what it did, shown
newest first (at most `MAX_SHOWN`) in the next rewrite request, and its parsed form, which tells a repeat from a new
version. Once a version was tried, the next rewrite is sampled from the whole distribution (`top_p` 1: a server
that cuts it to the likeliest tokens before it applies the temperature, as llama.cpp does, keeps a token the model is
sure of at any temperature, and the same reply with it); a repeat is not tested again, and after one the next is
sampled further from the last (`sampling`: the temperature up by `TEMPERATURE_STEP` a repeat, a fresh seed).

A rewrite's tests may also run for ever (a loop that never ends): `Pace` bounds each test run at `TEST_TIMES` the
longest run of the whole test command this candidate saw end, and at least `TEST_FLOOR_S`, so one such rewrite no
longer takes the rest of the run."""

from __future__ import annotations

import ast
import random
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import dataclass

if TYPE_CHECKING:
    from cli_agent.agent.judge.verify import TestRun

MAX_SHOWN = 3  # earlier wrong versions a rewrite request shows
CODE_CHARS = 1200  # of each, at most
OUTCOME_CHARS = 300  # of what each did, at most
TEMPERATURE_STEP = 0.3
MAX_TEMPERATURE = 1.5
TEST_TIMES = 10.0  # a rewrite's check may take this many times the whole test command's longest run,
TEST_FLOOR_S = 10.0  # and at least this long
HEADING = "Your earlier versions, newest first. Each was wrong; do not write any of them again:"


@dataclass(frozen=True)
class Tried:
    number: int  # the rewrite's number in its candidate
    code: str
    outcome: str  # what it did: the failing example's value, the first failing assertion, "it changed nothing"


def parsed_key(code: str) -> str:
    """The code once parsed, its layout and comments left out: two rewrites with one key are the same version."""
    try:
        return ast.dump(ast.parse(code))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return "\n".join(line.rstrip() for line in code.strip().splitlines())


def outcome(verdict: TestRun) -> str:
    """What a tested rewrite did: the task's failing example and the value it gave, else the first failing
    assertion of the tests, else their summary line."""
    if not verdict.examples:
        for line in verdict.failures.splitlines():
            if line.lstrip().startswith("E ") or "Error:" in line:
                return line.strip().removeprefix("E").strip()[:OUTCOME_CHARS]
    return verdict.summary[:OUTCOME_CHARS]


class Memory:
    def __init__(self) -> None:
        self._tried: dict[str, Tried] = {}
        self.repeats = 0

    def repeat_of(self, code: str) -> Tried | None:
        """The earlier rewrite `code` repeats (counted as a repeat), or None for a new version."""
        earlier = self._tried.get(parsed_key(code))
        self.repeats += earlier is not None
        return earlier

    def note(self, number: int, code: str, did: str) -> None:
        self._tried.setdefault(parsed_key(code), Tried(number, code, did[:OUTCOME_CHARS]))

    def shown(self) -> str:
        """The earlier wrong versions for the next request, newest first ("" before any)."""
        newest = list(self._tried.values())[::-1][:MAX_SHOWN]
        if not newest:
            return ""
        parts = [HEADING]
        for tried in newest:
            code = tried.code if len(tried.code) <= CODE_CHARS else tried.code[:CODE_CHARS] + "\n# ..."
            parts.append(f"```python\n{code}\n```\nWhat it did: {tried.outcome}")
        return "\n\n".join(parts)

    def sampling(self, temperature: float) -> dict[str, Any]:
        """The sampling options of the next rewrite: the first as configured; once a version was tried, from the
        whole distribution (`top_p` 1: sampled from the likeliest tokens only, the next rewrite repeated the last in
        22 of 36 cases of the real suite's traces); further from the last after each repeat."""
        if not self.repeats:
            return {"temperature": temperature} | ({"top_p": 1.0} if self._tried else {})
        return {"temperature": min(MAX_TEMPERATURE, temperature + TEMPERATURE_STEP * self.repeats),
                "seed": random.randrange(1, 2**31), "top_p": 1.0}


class Pace:
    """How long a candidate's test runs took, and how long the next may take."""

    def __init__(self, whole: str | None) -> None:
        self.whole = whole  # the project's whole test command
        self.longest: float | None = None  # the longest run of it that ended in its time (None: none yet)

    def took(self, seconds: float, verdict: TestRun) -> None:
        """A check took `seconds`; it sets the pace when it ran the `whole` test command to its end (not when the
        examples failed first, the tests could not run, or only the nearest test file ran and failed: the whole
        command after a change that passes there may take much longer)."""
        ended = verdict.ran and not (verdict.timed_out or verdict.broken or verdict.examples)
        if ended and verdict.command == self.whole:
            self.longest = max(self.longest or 0.0, seconds)

    def deadline(self, now: float, deadline: float) -> float:
        """When the next test run must end: `TEST_TIMES` the longest, at least `TEST_FLOOR_S`, within `deadline`."""
        if self.longest is None:
            return deadline
        return min(deadline, now + max(TEST_FLOOR_S, TEST_TIMES * self.longest))

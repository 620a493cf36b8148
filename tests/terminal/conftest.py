"""Fixtures of the pseudo-terminal tests."""

from __future__ import annotations

import pytest
from termkit import PROMPT, Repl, Term


@pytest.fixture
def repl(tmp_path):
    """`repl(replies, *args)`: the REPL started at its prompt; every one started is ended with the test."""
    started: list[Repl] = []

    def start(replies: list[dict], *args: str, **kw) -> Repl:
        started.append(Repl(tmp_path, replies, *args, **kw))
        started[-1].expect(PROMPT)
        return started[-1]

    yield start
    for r in started:
        if r.child.isalive():
            r.child.terminate(force=True)


@pytest.fixture
def term(tmp_path):
    """`term(replies, **kw)`: a REPL in a pty (`termkit.Term`); every one started is ended with the test. The
    modules that read a drawn screen (`screenkit.Terms`) define a `term` of their own."""
    terms: list[Term] = []

    def start(replies, **kw) -> Term:
        terms.append(Term(tmp_path, replies, **kw))
        return terms[-1]

    yield start
    for t in terms:
        if t.child.isalive():
            t.child.terminate(force=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """With pytest-xdist (`--dist loadgroup`), the terminal tests run one after another in one worker: each drives a
    REPL in a pseudo-terminal and waits for what it draws, which the other terminal tests' REPLs would slow."""
    for item in items:
        if "terminal" in item.path.parts and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group("terminal"))

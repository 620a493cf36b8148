"""`run_state.stop_for`: the one table from an exception that reaches the loop to the run's stop reason and line,
read by `Agent.run` and `Agent.run_call` alike."""

from __future__ import annotations

import pytest

from cli_agent.agent.run_state import Limits, stop_for
from cli_agent.contracts import errors
from cli_agent.contracts.events import StopReason


@pytest.mark.parametrize(("exc", "reason", "message"), [
    (KeyboardInterrupt(), StopReason.INTERRUPTED, "interrupted by the user (Ctrl-C)"),
    (errors.TerminateSignal(), StopReason.TERMINATED, "terminated (SIGTERM)"),
    (errors.RunTimeoutError("no time left"), StopReason.TIMEOUT, "timed out after 1.5 s (no time left)"),
    (errors.UsageError("bad flag"), StopReason.USAGE, "bad flag"),
    (errors.ProviderError("server down"), StopReason.ERROR, "server down"),
    (ValueError("boom"), StopReason.ERROR, "internal error: ValueError: boom"),
])
def test_each_exception_ends_the_run_with_its_reason(exc: BaseException, reason: StopReason, message: str) -> None:
    assert stop_for(exc, Limits(timeout_s=1.5)) == (reason, message)


def test_the_exit_code_follows_the_reason() -> None:
    codes = {type(exc).__name__: stop_for(exc, Limits())[0].exit_code
             for exc in (KeyboardInterrupt(), errors.UsageError("x"), errors.ProviderError("x"))}
    assert codes["UsageError"] == 2 and codes["ProviderError"] != 0 and codes["KeyboardInterrupt"] != 0

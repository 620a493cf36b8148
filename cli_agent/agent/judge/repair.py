"""The verification step after a run that changed files (`judged`): the project's tests run on what it changed
(`verify.Verifier`, in the command sandbox); while they fail, the model gets their failures back
(`test_feedback`) for a repair round, in which the tests are the judge and stay as they are (`tests_kept`); when
the rounds are spent, or when the run ended on a change that failed, more candidates (`attempts.Attempts`) may be
sampled, and the first that passes is offered as one change set (`candidates`). A run that changed files and has
no proof says so (`unproven`: no tests found, the tests could not run); one that ended for another reason (a change
that failed, its steps or its time) gets the verdict on the files as it leaves them (`as_left`)."""

from __future__ import annotations

import difflib
import uuid
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING

from cli_agent.agent.approval import CallFacts
from cli_agent.agent.judge.proof.runner_config import configures_tests
from cli_agent.contracts import (
    ApprovalAsked,
    Decision,
    Envelope,
    Event,
    Message,
    RunFinished,
    Staged,
    StopReason,
    ToolCall,
    ToolCallsProposed,
    ToolError,
    ToolResult,
    Verification,
    dataclass,
    errors,
    numbered,
)
from cli_agent.prompt import is_test_path

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

    from cli_agent.agent.approval_flow import Approvals
    from cli_agent.agent.judge.attempts import Attempts
    from cli_agent.agent.judge.bench import Bench, Judging
    from cli_agent.agent.judge.verify import TestRun, Verifier
    from cli_agent.agent.run_state import Approver, RunState
    from cli_agent.contracts import Change
    from cli_agent.tools import Dispatcher, Prepared


FIRST_SHARE = 1 / 3  # with more candidates (`attempts`), the part of the run's time the first attempt may take
# the ends of a run, other than "done", whose changes get a verdict as they are left
AS_LEFT = frozenset({StopReason.CHANGE_FAILED, StopReason.STEP_LIMIT, StopReason.TIMEOUT, StopReason.UNUSABLE})
AS_LEFT_MIN_S = 1.0  # below this much of the run's time left, that verdict is skipped (and said)


@dataclass(frozen=True)
class Applied:
    """A candidate that passed its tests and was applied in place of the run's change."""

    note: str  # what the model is told
    message: str  # the run's stop message
    tests: str  # its tests' summary line
    attempt: int  # its number


def judged(b: Bench, run: RunState, finished: RunFinished,
           approve: Approver | None) -> Generator[Event, Decision | None, RunFinished | None]:
    """How a run that reached an end goes on: as it is (no tests to judge, nothing changed, or they pass), with a
    repair round (None: the failures went back to the model), or with more candidates (`attempts`) once the
    rounds are spent or when its last change failed. A run ends "done" with its tests passing, or saying why its
    changes have no proof (`unproven`)."""
    j = b.judging
    if finished.stop_reason is StopReason.CHANGE_FAILED and j.verifier is not None and j.verifier.command:
        return (yield from _other_candidates(b, run, finished, approve, "its change did not land"))
    if finished.stop_reason is StopReason.DONE and not run.changed and j.verifier is not None \
            and j.verifier.states(run.task):
        return (yield from _unchanged(b, run, finished, approve, j.verifier))
    if finished.stop_reason is not StopReason.DONE or not run.changed:
        return finished
    if j.verifier is None:
        return (yield from unproven(run, finished, j, j.unverified))
    verdict = yield from verify(run, j.verifier)
    if not verdict.ran:  # no tests found, none collected, or they could not run: nothing for the model to fix
        return (yield from unproven(run, finished, j, verdict.summary, said=True))
    if verdict.passed:
        return replace(finished, verified=True, tests=verdict.summary)
    if run.verify_round <= j.verifier.rounds:
        b.talk.append(run, Message("user", test_feedback(verdict, changed_lines(run, b.setup.dispatcher))))
        return None
    stopped = replace(b.talk.stop(run, StopReason.TESTS_FAILED, f"{_subject(verdict).lower()} fail after the change "
                                                              f"({verdict.summary})", answer=finished.answer),
                      verified=False, tests=verdict.summary)
    why = f"{j.verifier.rounds} repair round(s) did not fix them"
    return (yield from _other_candidates(b, run, stopped, approve, why))


def _unchanged(b: Bench, run: RunState, finished: RunFinished, approve: Approver | None,
               verifier: Verifier) -> Generator[Event, Decision | None, RunFinished]:
    """A run that changed nothing while its task states examples, imports or names: they are checked all the same.
    Failing, the run ends as failing examples end a change (exit 8), saying that nothing was changed, and the other
    candidates (`attempts`) get their turn."""
    verdict = yield from verify(run, verifier, stated_only=True)
    if not verdict.ran or verdict.passed:
        return replace(finished, tests=verdict.summary) if verdict.ran else finished
    stopped = replace(b.talk.stop(run, StopReason.TESTS_FAILED, f"nothing was changed, and {_subject(verdict).lower()} "
                                                              f"fail ({verdict.summary})", answer=finished.answer),
                      verified=False, tests=verdict.summary)
    return (yield from _other_candidates(b, run, stopped, approve, "the run changed nothing"))


def unproven(run: RunState, finished: RunFinished, j: Judging, why: str, *,
             said: bool = False) -> Generator[Event, Decision | None, RunFinished]:
    """A run that changed files ends without proof, and says so in one line (`! not verified: WHY`, unless the
    verdict's own line `said` it) and in `tests`; with `verify = "required"` it ends UNVERIFIED (exit 9)."""
    why = why or "no test ran"
    if not said:
        command = (j.verifier.command or "") if j.verifier is not None else ""
        yield Verification(command=command, round=run.verify_round, phase="unverified", summary=why)
    left = replace(finished, verified=None, tests=why)
    if j.require_verified and finished.stop_reason is StopReason.DONE:
        return replace(left, stop_reason=StopReason.UNVERIFIED,
                       message=f'not verified: {why}; proof is required (--require-verified, or verify = "required")')
    return left


def as_left(b: Bench, run: RunState, finished: RunFinished) -> Generator[Event, Decision | None, RunFinished]:
    """A run that changed files and ended for another reason than "done" (`AS_LEFT`: a change that failed, its steps
    or its time) gets the verdict on its files as it leaves them, within the run's own time (`--timeout` is a hard
    limit): with less than `AS_LEFT_MIN_S` left it is skipped, and said; nothing goes back to the model, and its stop
    reason stays."""
    if finished.stop_reason not in AS_LEFT or not run.changed or finished.verified is not None or finished.tests:
        return finished
    j = b.judging
    if j.verifier is None:
        return (yield from unproven(run, finished, j, j.unverified))
    if run.deadline - b.setup.clock() < AS_LEFT_MIN_S:
        return (yield from unproven(run, finished, j, "the verdict on the files as left was skipped: the run's time "
                                                      "was spent"))
    try:
        verdict = yield from verify(run, j.verifier)
    except (KeyboardInterrupt, errors.TerminateSignal):
        return finished
    if not verdict.ran:
        return (yield from unproven(run, finished, j, verdict.summary, said=True))
    return replace(finished, verified=verdict.passed, tests=verdict.summary)


def gave_way(b: Bench, run: RunState, approve: Approver | None,
             wait: float = 0.0) -> Generator[Event, Decision | None, RunFinished]:
    """The first attempt used its share of the run's time (`RunState.share_deadline`) without ending, or its next
    request would wait `wait` seconds for its first token, past the share (the bundled model reading a long
    prompt). A change it made is checked first: passing, it ends the run "done"; else the other candidates get the
    rest."""
    j = b.judging
    if not run.steps and j.attempts is not None and j.attempts.rewrite_first:
        stopped = b.talk.stop(run, StopReason.TIMEOUT, "the first attempt gave way to the rewrite (rewrite_first)")
        return (yield from _other_candidates(b, run, stopped, approve, "it gave way", first=1))
    used = f"the first attempt used its share of the time ({run.steps} model requests)"
    if wait:
        left = max(0.0, (run.share_deadline or 0.0) - b.setup.clock())
        used = (f"the first attempt gave way after {run.steps} model requests: the next would wait about {wait:.0f} s "
                f"for its first token, and {left:.0f} s of its share were left")
    if run.changed and j.verifier is not None and j.verifier.command:
        verdict = yield from verify(run, j.verifier)
        if verdict.ran and verdict.passed:
            return replace(b.talk.stop(run, StopReason.DONE, f"{used}; its change passes the tests"), verified=True,
                           tests=verdict.summary)
    stopped = b.talk.stop(run, StopReason.TIMEOUT, used)
    return (yield from _other_candidates(b, run, stopped, approve, "it gave way"))


def _other_candidates(b: Bench, run: RunState, failed: RunFinished, approve: Approver | None,
                      why: str, first: int = 2) -> Generator[Event, Decision | None, RunFinished]:
    """`failed`, unless one of the other candidates (from number `first`) passes its tests and is applied: then
    done."""
    attempts, s = b.judging.attempts, b.setup
    if attempts is None:
        return replace(failed, message=f"{failed.message}; {why}") if failed.verified is False else failed
    won, why = yield from candidates(run, run.task, attempts, b.approvals, approve, s.dispatcher, s.clock, why,
                                     first)
    steps, usage = attempts.spent  # the candidates' model requests and tokens count as the run's
    run.steps, run.usage = run.steps + steps, run.usage + usage
    if won is None:
        return replace(failed, message=f"{failed.message}; {why}", steps=run.steps)
    b.talk.append(run, Message("user", won.note))
    return replace(b.talk.stop(run, StopReason.DONE, won.message), verified=True, tests=won.tests,
                   attempt=won.attempt, answer=failed.answer)


def verify(run: RunState, verifier: Verifier, *, stated_only: bool = False, until: float | None = None
           ) -> Generator[Event, Decision | None, TestRun]:
    """Check what this run changed: the task's examples, then the project's tests (in the command sandbox; nothing
    they write is kept), until the run's deadline or `until`; `stated_only`: only the task's examples and
    statements."""
    run.verify_round += 1
    what = verifier.describe(run.task, run.changed)
    if stated_only:
        what = what.split(", then ")[0]  # the task's examples, not the tests
    if what:
        yield Verification(command=what, round=run.verify_round, phase="running")
    deadline = run.deadline if until is None else min(until, run.deadline)
    testing = verifier.check(tuple(run.changed), deadline, run.task, stated_only=stated_only)
    try:
        while True:
            next(testing)
    except StopIteration as done:
        verdict: TestRun = done.value
    finally:
        testing.close()
    verdict = _own_doing(run, verdict)
    if verdict.ran and not verdict.passed and not verdict.examples and run.tests_failed_at is None:
        run.tests_failed_at = len(run.applied)
    phase = "unverified" if not verdict.ran else "passed" if verdict.passed else "failed"
    yield Verification(command=verdict.command, round=run.verify_round, phase=phase, summary=verdict.summary,
                       examples=verdict.examples)
    return verdict


def _own_doing(run: RunState, verdict: TestRun) -> TestRun:
    """`verdict` as this run's change answers for it: tests that could not run after they ran in this run, or after
    it changed what configures them (`runner_config`), fail the change (whatever file the error names); tests that
    pass only after it changed what judges them, once they had failed, prove nothing."""
    if verdict.broken:
        configured = _paths(run.applied, run.task, tests=False)
        if run.tests_failed_at is not None or configured:
            after = f"after this run's change ({', '.join(configured)})" if configured else "after this run's change"
            return replace(verdict, ran=True, broken=False, summary=f"{verdict.summary}, {after}")
    if verdict.passed and verdict.ran and run.tests_failed_at is not None:
        judging = _paths(run.applied[run.tests_failed_at:], run.task, tests=True)
        if judging:
            return replace(verdict, passed=False, ran=False, broken=True, summary=(
                f"the tests pass only after this run changed what judges them ({', '.join(judging)}), once they "
                "had failed: that is no proof"))
    return verdict


def _paths(changes: Sequence[Change], task: str, *, tests: bool) -> list[str]:
    """The paths of `changes` that configure the tests (and, with `tests`, the test files), the task's own aside."""
    return list(dict.fromkeys(c.path for c in changes if (configures_tests(c) or (tests and is_test_path(c.path)))
                              and not _named(c.path, task)))


def test_feedback(verdict: TestRun, changed: str) -> str:
    """What the model is told when the tests fail after its change; `changed`: the lines it changed, as they are now
    (`changed_lines`)."""
    now = f"\n\nThe lines you changed, as they are now (NUMBER| text):\n{changed}" if changed else ""
    ran, goal = (verdict.summary, "examples hold") if verdict.examples else \
        (f"`{verdict.command}`: {verdict.summary}", "tests pass")
    return (f"{_subject(verdict)} fail after your change ({ran}).\n{verdict.failures}{now}\n\n"
            f"Fix the code so that these {goal} (change a test only if the task asks for it), then say that you "
            "are done.")


def _subject(verdict: TestRun) -> str:
    return "The examples your task states" if verdict.examples else "The project's tests"


def changed_lines(run: RunState, dispatcher: Dispatcher, *, files: int = 2, around: int = 3) -> str:
    """The lines this run changed in its first `files` files, as they are now, numbered with `around` lines either
    side; each file shown so counts as shown with line numbers, so `replace_lines` can use them at once."""
    blocks = []
    for rel in list(run.changed)[:files]:
        first = next((c.before for c in run.applied if c.path == rel), None)
        try:
            now = dispatcher.ctx.workspace.read_bytes(rel, limit=1 << 20)
        except ToolError:
            continue
        old = (first or b"").decode("utf-8", "replace").splitlines()
        new = now.decode("utf-8", "replace").replace("\r\n", "\n")
        spans = [(j1, j2) for tag, _, _, j1, j2 in difflib.SequenceMatcher(None, old, new.splitlines(),
                                                                          autojunk=False).get_opcodes()
                 if tag != "equal"]
        if not spans:
            continue
        top, bottom = spans[0][0] + 1, max(spans[-1][1], spans[-1][0] + 1)
        blocks.append(f"--- {rel}\n{numbered(new, top, bottom, around=around)}")
        if dispatcher.ctx.seen is not None:
            dispatcher.ctx.seen.note(rel, now)
    return "\n".join(blocks)


def tests_kept(run: RunState, prepared: Prepared) -> Prepared:
    """Once the tests have failed in this run, a change to a test file the task does not name, or to what configures
    the tests (`runner_config`: a `conftest.py`, `pytest.ini`, the test settings of `pyproject.toml`...), is
    refused: the tests judge the repair, and a repair that rewrote them would pass by their word alone."""
    if not run.verify_round:
        return prepared
    touched = [c.path for c in prepared.changes if is_test_path(c.path) and not _named(c.path, run.task)]
    configured = [p for p in _paths(prepared.changes, run.task, tests=False) if p not in touched]
    if not touched and not configured:
        return prepared
    what = [f"{', '.join(touched)}: a test file"] if touched else []
    what += [f"{', '.join(configured)}: it configures the project's tests"] if configured else []
    return replace(prepared, change=None, staged=None, error=Envelope.failure(
        f"{'; '.join(what)}, and the project's tests judge this repair, so they stay as they are "
        "(the task does not name it): change the code under test instead"))


def _named(path: str, task: str) -> bool:
    """Whether the task names the file, by its path or its name (`tests/test_calc.py`, `test_calc.py`)."""
    return path in task or path.rsplit("/", 1)[-1] in task


def candidates(run: RunState, prompt: str, attempts: Attempts, approvals: Approvals, approve: Approver | None,
               dispatcher: Dispatcher, clock: Callable[[], float], why: str,
               first: int = 2) -> Generator[Event, Decision | None, tuple[Applied | None, str]]:
    """Sample more candidates (from number `first`: 1 when the run gave way before its first request); offer the
    first that passes its tests as one change set. Returns what was applied (None when nothing was) and, when
    nothing was, why the tests still fail."""
    share = 1 - FIRST_SHARE if first == 1 else 1.0  # the rewrite first: the loop's share swapped with the rest
    winner = yield from attempts.sample(prompt, tuple(run.applied), lambda: run.deadline - clock(), first, share)
    if winner is None:
        more = "more " if first > 1 else ""
        return None, f"{why}, nor did {attempts.count - first + 1} {more}candidate(s)"
    call = ToolCall(id=f"attempt-{uuid.uuid4().hex[:8]}", name="attempts",
                    arguments={"candidate": winner.number, "of": attempts.count, "tests": winner.summary})
    staged = Staged({"candidate": winner.number, "tests": winner.summary}, winner.changes)
    yield ToolCallsProposed(calls=(call,), terminate=False)  # every front end knows the call it is asked about
    asked = ApprovalAsked(call=call, change=None, index=1, total=1, changes=winner.changes,
                          about=f"candidate {winner.number} of {attempts.count} passes the tests "
                                f"({winner.summary}); these changes replace this run's")
    reason = yield from approvals.ask(run, CallFacts(call.name, True, staged.kind), asked, approve)
    if reason is not None:
        return None, f"{why}; candidate {winner.number}, which passes them, was not applied ({reason})"
    envelope = dispatcher.apply_set(staged)
    applied = set((envelope.data or {}).get("applied", ())) if isinstance(envelope.data, dict) else set()
    yield ToolResult(call_id=call.id, tool=call.name, envelope=envelope,
                     changes=tuple(c for c in staged.changes if c.path in applied))
    if not envelope.ok:
        return None, f"{why}; candidate {winner.number} passes them but could not be applied"
    note = (f"(Candidate {winner.number} of {attempts.count}, a fresh attempt at this task, passed the tests "
            f"({winner.summary}) and was applied in place of your change: {', '.join(staged.paths())}.)")
    return Applied(note, f"done: candidate {winner.number} of {attempts.count} passes the tests", winner.summary,
                   winner.number), ""

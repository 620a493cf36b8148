"""Several candidates, the tests as the judge (`attempts = N`, `--attempts N`).

When a run's change still fails the project's tests after its repair rounds, `Attempts.sample` tries again from
the start up to N-1 more times, each candidate in its own copy of the workspace as it was before the run: a fresh
conversation with the same model and task, sampled at `temperature` (so the candidates differ), every change
approved inside the copy, its commands in the command sandbox of the copy, its tests run there by the same
verification. The first candidate whose tests pass comes back as one change set: from the workspace as it is now
(the first attempt's changes applied) to the candidate's files. The loop offers that set for approval like any
change set; nothing of a candidate touches the real workspace before that. The copies are removed afterwards.

A copy leaves out `.git` and is refused past `COPY_MAX_FILES` files or `COPY_MAX_BYTES` bytes (attempts are then
skipped, and the run says so).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.agent.judge.verify import COULD_NOT_RUN
from cli_agent.contracts import (
    AssistantMessage,
    Change,
    ChangeKind,
    Event,
    ModelRequest,
    Retry,
    RunFinished,
    StopReason,
    ToolResult,
    Usage,
    Verification,
    Warning,
    dataclass,
    errors,
)
from cli_agent.fs import CopyLimits, CopyTooBig, copy_tree, read_regular

if TYPE_CHECKING:
    from cli_agent.contracts import EventStream

__all__ = ["Attempts", "CandidateRun"]

COPY_MAX_FILES = 20_000
COPY_MAX_BYTES = 512 << 20
SKIPPED = (".git",)

# (copy root, the task, seconds left, its number) -> the candidate's run: its events, ending in its RunFinished
CandidateRun = Callable[[Path, str, float, int], "EventStream"]


@dataclass(frozen=True)
class Candidate:
    number: int  # 2 for the first extra candidate (the run itself was the first)
    summary: str  # its tests' summary line
    changes: tuple[Change, ...]  # from the real workspace now to the candidate's files


class Attempts:
    def __init__(self, count: int, run: CandidateRun, root: Path, *, rewrite_first: bool = False) -> None:
        self.count = count  # candidates in all, the run itself included
        self.run = run
        self.root = root
        self.rewrite_first = rewrite_first  # the run gives way before its first request; candidate 1 is a rewrite
        self.spent: tuple[int, Usage] = (0, Usage())  # the last `sample`'s candidates: their model requests, usage

    def sample(self, prompt: str, applied: Sequence[Change], seconds_left: Callable[[], float], first: int = 2,
               share: float = 1.0) -> Generator[Event, None, Candidate | None]:
        """Try candidates first..count until one passes its tests; yields progress (its test runs and a line each);
        returns the winner, or None. `first` is 1 when the run itself gave way before its first request
        (`rewrite_first`); candidate `first` then gets `share` of the time left, the next ones the rest. A candidate
        that made no change does not use up a turn while time is left (at most count - 1 such): one more is sampled
        in its place."""
        last, spares, number = self.count, 0, first - 1
        self.spent = (0, Usage())
        while number < last:
            number += 1
            of = max(number, self.count)  # a candidate sampled in the place of one that made no change counts on
            if seconds_left() <= 1:
                yield Warning(code="attempt", message=f"no time left for candidate {number} of {of}")
                return None
            folder = Path(tempfile.mkdtemp(prefix="cli-agent-attempt-"))
            try:
                copy = folder / "workspace"
                problem = _copy(self.root, copy)
                if problem:
                    yield Warning(code="attempt", message=f"no more candidates: {problem}")
                    return None
                revert(copy, applied)
                yield Warning(code="attempt", message=f"candidate {number} of {of}: starting from the "
                                                      f"files as they were before this run")
                seconds = seconds_left() * (share if number == first else 1.0)
                finished, paths = yield from self._drive(copy, prompt, seconds, number)
                self.spent = (self.spent[0] + finished.steps, self.spent[1] + finished.usage)
                _stopped_by_user(finished)
                if finished.verified:
                    changes = _difference(self.root, copy, {c.path for c in applied} | paths)
                    return Candidate(number, finished.tests, changes)
                verdict = finished.tests or finished.message
                said = f"did not pass: {verdict}" if paths else "made no change"
                if not paths and spares < self.count - 1 and seconds_left() > 1:
                    spares, last = spares + 1, last + 1
                    said += "; one more is sampled in its place"
                yield Warning(code="attempt", message=f"candidate {number} of {of} {said}")
                if verdict.startswith(COULD_NOT_RUN):  # no candidate can be judged
                    return None
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        return None

    def _drive(self, copy: Path, prompt: str, seconds: float, number: int
               ) -> Generator[Event, None, tuple[RunFinished, set[str]]]:
        """Run one candidate; its test runs and retries are passed on (as progress), and its model requests and
        replies tagged with its number (for the trace, `--output stream-json` and replay); the rest stays inside."""
        events = self.run(copy, prompt, seconds, number)
        paths: set[str] = set()
        finished: RunFinished | None = None
        try:
            for event in events:
                if isinstance(event, ToolResult):
                    paths.update(c.path for c in (event.change, *event.changes) if c is not None)
                elif isinstance(event, Verification | Retry):
                    yield event
                elif isinstance(event, ModelRequest | AssistantMessage):
                    yield replace(event, candidate=number)  # in the trace, tagged: what each candidate asked and got
                elif isinstance(event, RunFinished):
                    finished = event
        finally:
            events.close()
        assert finished is not None  # a run always ends with its RunFinished
        return finished, paths


def _stopped_by_user(finished: RunFinished) -> None:
    """A candidate that Ctrl-C or SIGTERM stopped stops the run too (raised again, for the loop to end it so): no
    more candidates are sampled, and none is applied."""
    if finished.stop_reason is StopReason.TERMINATED:
        raise errors.TerminateSignal(finished.message)
    if finished.stop_reason in (StopReason.INTERRUPTED, StopReason.CANCELLED):
        raise KeyboardInterrupt(finished.message)


def _copy(root: Path, into: Path) -> str:
    """Copy the workspace (`fs.copy`: links as links, `.git` left out, bounded, never into itself); "" or why it
    was not copied."""
    try:
        copy_tree(root, into, limits=CopyLimits(COPY_MAX_FILES, COPY_MAX_BYTES), skip=SKIPPED)
    except CopyTooBig as exc:
        return f"the workspace is too big to copy ({exc})"
    except OSError as exc:
        return f"the workspace could not be copied ({exc})"
    return ""


def revert(copy: Path, applied: Sequence[Change]) -> None:
    """Undo the run's applied changes in the copy, newest first."""
    for change in reversed(applied):
        target = copy / change.path
        if change.before is None:
            target.unlink(missing_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(change.before)
            if change.mode is not None:
                os.chmod(target, change.mode)


def _difference(root: Path, copy: Path, paths: set[str]) -> tuple[Change, ...]:
    """The changes that turn the real workspace's files into the candidate's, for `paths`."""
    out = []
    for path in sorted(paths):
        now, then = _bytes(root / path), _bytes(copy / path)
        if now == then:
            continue
        kind: ChangeKind = "create" if now is None else "delete" if then is None else "edit"
        mode = _mode(copy / path) if then is not None else _mode(root / path)
        out.append(Change(tool="attempts", kind=kind, path=path, before=now, after=then, mode=mode,
                          summary=f"{kind} {path} (from the candidate that passed the tests)"))
    return tuple(out)


def _bytes(path: Path) -> bytes | None:
    try:
        return read_regular(path, COPY_MAX_BYTES, follow=False) if path.is_file() and not path.is_symlink() else None
    except OSError:
        return None


def _mode(path: Path) -> int | None:
    try:
        return os.stat(path).st_mode & 0o7777
    except OSError:
        return None

"""The judge as the loop sees it: one `Judge`, built once per agent on its bench (`bench`: the agent's setup, its
conversation and approvals, and the session's `Judging`), asked at the few points where a run's changes are judged:
when a call would change a test under repair (`kept`), when a run reaches an end (`verdict`: done, a repair round,
or other candidates), when the first attempt used its share of the time (`gave_way`), when a run ended otherwise
(`as_left`), and for a whole-definition candidate (`rewrite`). Its model requests go through the loop's own request
path (`agent.model_call`: retries, events, the trace)."""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import TYPE_CHECKING

from cli_agent.agent.judge import repair
from cli_agent.agent.judge.bench import Bench

if TYPE_CHECKING:
    from cli_agent.agent.run_state import Approver, RunState
    from cli_agent.contracts import Decision, Event, RunFinished
    from cli_agent.prompt import Place
    from cli_agent.tools import Prepared

Judged = Generator["Event", "Decision | None", "RunFinished"]


class Judge(Bench):
    """The judge of one agent's runs, on its bench (`bench.Bench`); the agent builds it once and asks it."""

    def started(self, run: RunState) -> None:
        """A run begins: with more candidates to try and tests to judge them, the first attempt gets a share of the
        run's time (`repair.FIRST_SHARE`), the others the rest. With `rewrite_first`, and a definition the task shows
        to rewrite, it gives way at once: candidate 1, a rewrite, gets the rest of the time, then the loop."""
        j, s = self.judging, self.setup
        if j.attempts is not None and j.attempts.count > 1 and j.verifier is not None and j.verifier.command:
            first = j.attempts.rewrite_first and bool(self.places(run.task))
            run.share_deadline = s.clock() + (0.0 if first else s.limits.timeout_s * repair.FIRST_SHARE)

    def kept(self, run: RunState, prepared: Prepared) -> Prepared:
        """`prepared`, or refused when it would change a test that judges this run's repair (`repair.tests_kept`)."""
        return repair.tests_kept(run, prepared)

    def verdict(self, run: RunState, finished: RunFinished,
                approve: Approver | None) -> Generator[Event, Decision | None, RunFinished | None]:
        """How a run that reached an end goes on (`repair.judged`): as it is, with its tests' verdict, or other
        candidates; None when the tests' failures went back to the model for a repair round."""
        return (yield from repair.judged(self, run, finished, approve))

    def gave_way(self, run: RunState, approve: Approver | None, wait: float = 0.0) -> Judged:
        """The first attempt used its share of the time, or its next request would wait `wait` seconds for its
        first token, past the share: the other candidates get the rest."""
        return (yield from repair.gave_way(self, run, approve, wait))

    def as_left(self, run: RunState, finished: RunFinished) -> Judged:
        """A run that ended otherwise than "done": the verdict on its files as it leaves them."""
        return (yield from repair.as_left(self, run, finished))

    def places(self, prompt: str) -> list[Place]:
        """The definitions a whole-definition candidate for `prompt` would rewrite (none: it runs the loop)."""
        if not self.judging.task_files:
            return []
        from cli_agent.agent.judge import rewrite  # deferred: the rewrite's modules load only for a rewrite candidate

        return rewrite.places_for(prompt, self.setup.dispatcher.ctx.workspace)

    def rewrite(self, run: RunState, places: Sequence[Place], temperature: float) -> Judged:
        """One whole-definition candidate for the run's task, its rewrites sampled at `temperature`."""
        from cli_agent.agent.judge import rewrite  # deferred: as in `places`

        return (yield from rewrite.candidate(self, run, places, temperature))

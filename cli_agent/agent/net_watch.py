"""A running command's network, as the loop sees it: each connection the sandbox's proxy allowed or refused becomes
a `NetworkConnection` event under the command's call, and a connection to a host no rule allows, while someone can
be asked, becomes an `ApprovalAsked` about that host and port: yes (this once), a/t (this host for the session),
w / ACP's "allow always" (for the session, and the host added to the user config's `[sandbox.network] allow`) or
no. Only the user's answer opens a host; no approval mode, grant or --yes does (the network is not a change)."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Generator, Iterator
from typing import TYPE_CHECKING

from cli_agent.contracts import Answer, ApprovalAsked, ApprovalDecided, Decision, Event, NetworkConnection, ToolCall

if TYPE_CHECKING:
    from cli_agent.agent.run_state import Approver, RunState
    from cli_agent.sandbox import SessionNet
    from cli_agent.tools import Dispatcher

_GRANTS = {Decision.YES: "once", Decision.ALL: "session", Decision.TOOL: "session", Decision.ALWAYS: "always"}


def net_of(dispatcher: Dispatcher) -> SessionNet | None:
    commands = dispatcher.ctx.commands
    return None if commands is None else commands.net


@contextlib.contextmanager
def asking(net: SessionNet | None, interactive: bool) -> Iterator[None]:
    """While a command runs in the foreground with someone to ask, unlisted hosts are asked about."""
    with net.asked_by() if net is not None and interactive else contextlib.nullcontext():
        yield


def watch(net: SessionNet | None, run: RunState, call: ToolCall,
          approve: Approver | None) -> Generator[Event, Decision | None, None]:
    """The connections since the last look, as events, and the questions waiting, asked."""
    if net is None:
        return
    for question in net.questions():
        asked = ApprovalAsked(call=call, change=None, index=0, total=1, scope=f"{question.host}:{question.port}",
                              about=f"network: the command connects to {question.host}:{question.port}, which no "
                                    f"[sandbox.network] rule allows; a/t: this host for the session; w: always (your "
                                    f"user config)",
                              always=f"[sandbox.network]\nallow = [\"{question.rule}\"]"
                                     f"  # added to your user config\n")
        waited_from = time.monotonic()
        sent = yield asked
        answer = sent if isinstance(sent, Decision | Answer) else approve(asked) if approve is not None else Decision.NO
        run.deadline += time.monotonic() - waited_from  # the time a person takes to answer is not the run's
        decision = answer.decision if isinstance(answer, Answer) else answer
        yield ApprovalDecided(call_id=call.id, decision=decision, by="user")
        question.answer(_GRANTS.get(decision, "no"))
    for seen in net.drain():
        yield NetworkConnection(call_id=call.id, host=seen.host, port=seen.port, allowed=seen.allowed, why=seen.why)

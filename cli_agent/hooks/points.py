"""Where hooks run in a run, and what their outcome does (Claude Code's semantics where it has them):

    event        runs                                   exit 2                              other non-zero
    before_tool  before a call is approved and run      the call is blocked; stderr is       shown; the call goes on
                                                        the reason the model gets
    after_tool   after a call ran, with its result      stderr is added to the result the    shown
                                                        model gets
    stop         when the run is about to end "done"    the run goes on: stderr goes back    shown
                                                        to the model as the user's words
    prompt       when the user's prompt arrives         the prompt is blocked (the run ends  shown
                                                        denied, exit 3); stdout on exit 0
                                                        is added to the prompt

Each hook that ran is a `HookRan` event. `match` selects tools by name (tool events only). Hooks of one event run
one after another in config order; the first that blocks stops the rest.
"""

from __future__ import annotations

import json
import time
from collections.abc import Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cli_agent.contracts import DeniedError, HookRan
from cli_agent.hooks.process import HookOutcome, run_hook

if TYPE_CHECKING:
    from cli_agent.config import Hook
    from cli_agent.contracts import Envelope, ToolCall

__all__ = ["HookBox", "Hooks", "PromptBlocked"]

BLOCK = 2  # the exit code that blocks (as in Claude Code)
_SAID_MAX = 4000  # characters of a hook's stderr the model gets


def _json(event: dict[str, Any]) -> bytes:
    """The event as UTF-8 JSON. A file name that is not UTF-8 (Python holds its bytes as lone surrogates) cannot be
    written as UTF-8: then the whole event is ASCII JSON, such a name a `\\udcXX` escape a JSON reader takes back
    (Python's `os.fsencode(json.loads(...))` gives the name's bytes)."""
    text = json.dumps(event, ensure_ascii=False, default=str)
    try:
        return text.encode()
    except UnicodeEncodeError:
        return json.dumps(event, default=str).encode("ascii")


class PromptBlocked(DeniedError):
    """A prompt hook blocked the user's prompt: the run ends denied (exit 3), with the hook's reason."""


class HookBox(Protocol):
    """Where a sandboxed hook (a project's) runs: the command sandbox, as `run_hook` runs the user's own."""

    def run(self, command: str, payload: bytes, cwd: Path, timeout_s: float, env: dict[str, str]) -> HookOutcome: ...


class Hooks:
    """The session's hooks over `root` (the workspace: their working folder); `box` runs the sandboxed ones (a
    project's): without one, they do not run."""

    def __init__(self, hooks: Sequence[Hook], root: Path, box: HookBox | None = None) -> None:
        self.hooks = tuple(hooks)
        self.root = root
        self.box = box

    def _outcome(self, hook: Hook, body: bytes, timeout_s: float, env: dict[str, str]) -> HookOutcome:
        if not hook.sandboxed:
            return run_hook(hook.command, body, self.root, timeout_s, env)
        if self.box is None:
            return HookOutcome(None, "", "not run: a project's hook runs only in the command sandbox, and there is "
                                         "none here (see `cli-agent sandbox`)")
        return self.box.run(hook.command, body, self.root, timeout_s, env)

    @property
    def on_tools(self) -> bool:
        return any(h.event in ("before_tool", "after_tool") for h in self.hooks)

    def _run(self, event: str, payload: dict[str, Any], deadline: float | None, tool: str = "",
             call_id: str = "") -> Generator[HookRan, None, HookRan | None]:
        """Run the hooks of `event` (those matching `tool`) in order; the first that blocked, else None."""
        body = _json({"event": event, "cwd": str(self.root), **payload})
        for hook in self.hooks:
            if hook.event != event or not hook.matches(tool):
                continue
            left = hook.timeout_s if deadline is None else min(hook.timeout_s, max(deadline - time.monotonic(), 1.0))
            out = self._outcome(hook, body, left,
                                {"CLI_AGENT_PROJECT_DIR": str(self.root), "CLI_AGENT_HOOK_EVENT": event})
            ran = HookRan(event=event, command=hook.command, exit_code=out.exit_code, stdout=out.stdout,
                          stderr=out.stderr, blocked=out.exit_code == BLOCK, timed_out=out.timed_out,
                          call_id=call_id, tool=tool)
            yield ran
            if ran.blocked:
                return ran
        return None

    def before_tool(self, call: ToolCall, deadline: float | None) -> Generator[HookRan, None, str | None]:
        """The reason a hook blocks `call` (exit 2: its stderr), else None."""
        blocked = yield from self._run("before_tool", {"tool_name": call.name, "tool_input": call.arguments,
                                                       "call_id": call.id}, deadline, call.name, call.id)
        if blocked is None:
            return None
        said = blocked.stderr.strip()[:_SAID_MAX] or f"the hook `{blocked.command}` exited 2 without a reason"
        return f"blocked by a before_tool hook: {said}"

    def after_tool(self, call: ToolCall, envelope: Envelope,
                   deadline: float | None) -> Generator[HookRan, None, Envelope]:
        """The result as the model gets it: with a hook's stderr added when it exited 2."""
        blocked = yield from self._run("after_tool", {"tool_name": call.name, "tool_input": call.arguments,
                                                      "call_id": call.id, "tool_response": envelope.to_dict()},
                                       deadline, call.name, call.id)
        if blocked is None or not blocked.stderr.strip():
            return envelope
        return replace(envelope, warnings=(*envelope.warnings,
                                           f"an after_tool hook says: {blocked.stderr.strip()[:_SAID_MAX]}"))

    def prompt(self, prompt: str, deadline: float | None) -> Generator[HookRan, None, str]:
        """What the prompt hooks add to the prompt (their stdout on exit 0); raises PromptBlocked on exit 2."""
        added: list[str] = []
        for hook in self.hooks:
            if hook.event != "prompt":
                continue
            ran = yield from self._run_one(hook, {"prompt": prompt}, deadline)
            if ran.blocked:
                said = ran.stderr.strip()[:_SAID_MAX] or "no reason given"
                raise PromptBlocked(f"the prompt was blocked by the hook `{hook.command}`: {said}")
            if ran.exit_code == 0 and ran.stdout.strip():
                added.append(ran.stdout.strip()[:_SAID_MAX])
        return "\n\n".join(added)

    def _run_one(self, hook: Hook, payload: dict[str, Any],
                 deadline: float | None) -> Generator[HookRan, None, HookRan]:
        single = Hooks([hook], self.root, self.box)
        ran: HookRan | None = None
        for event in single._run(hook.event, payload, deadline):
            ran = event
            yield event
        assert ran is not None
        return ran

    def stop(self, stop_reason: str, answer: str, again: bool,
             deadline: float | None) -> Generator[HookRan, None, str | None]:
        """What a stop hook sends back to the model to go on with (exit 2: its stderr), else None. `again`: the
        run already went on once because of a stop hook (`stop_hook_active`)."""
        blocked = yield from self._run("stop", {"stop_reason": stop_reason, "answer": answer,
                                                "stop_hook_active": again}, deadline)
        if blocked is None:
            return None
        return blocked.stderr.strip()[:_SAID_MAX] or f"the stop hook `{blocked.command}` asks you to go on"

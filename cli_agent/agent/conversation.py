"""The session's conversation, and the one place that changes it. During a run, every message the loop adds is
recorded for the run's `MessagesAppended` (what a resumed session gets back, exactly as the model saw it);
between runs, a note (`note`) comes back as a `MessagesAppended` of its own for the trace to keep. A new
conversation (`start`) is what `/clear`, `/compact`, a model switch and a resume make. How a run ends (`stop`,
`done`) is here too: an end leaves a valid conversation (every call answered). So are the tool-call ids: unique
within the session (`unique`), whatever the server numbers them, so everything keyed on a call's id (the
renderer, an editor's tool-call cards, the approvals) finds the right one."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from typing import TYPE_CHECKING

from cli_agent.agent.context_window import ContextWindow
from cli_agent.contracts import Envelope, ImagePart, Message, MessagesAppended, RunFinished, StopReason, ToolCall

if TYPE_CHECKING:
    from cli_agent.agent.run_state import RunState
    from cli_agent.agent.wire import Parsed, WireProtocol

_NOT_RUN = "not run: an earlier call in this turn was denied"
_CUT_SHORT = (StopReason.INTERRUPTED, StopReason.TERMINATED, StopReason.TIMEOUT, StopReason.ERROR)


class Conversation:
    def __init__(self, protocol: WireProtocol) -> None:
        self.messages: list[Message] = []
        self.window = ContextWindow()
        self.protocol = protocol  # how a tool result is sent back to the model
        self._ids: set[str] = set()  # every tool-call id of the session so far

    def unique(self, parsed: Parsed) -> Parsed:
        """`parsed` with each call's id unique within the session: a missing or repeated one (a server that numbers
        calls per reply, `call_0` every time; the json protocol's per-run step numbers) is renamed `callNNNNN`, nine
        letters and digits as the strictest servers take them. The conversation carries the renamed id, so a result
        answers the id its call has there; no server checks an id against the ones it issued."""
        if not parsed.calls:
            return parsed
        calls = []
        for call in parsed.calls:
            if not call.id or call.id in self._ids:
                number = len(self._ids)
                while f"call{number:05d}" in self._ids:
                    number += 1
                call = replace(call, id=f"call{number:05d}")
            self._ids.add(call.id)
            calls.append(call)
        return replace(parsed, calls=tuple(calls))

    def append(self, run: RunState, message: Message) -> None:
        """Add a message during `run`, and record it for the run's `MessagesAppended`."""
        self.messages.append(message)
        run.appended.append(message)

    def record_result(self, run: RunState, call: ToolCall, content: str, images: tuple[ImagePart, ...] = ()) -> None:
        """The result of `call` (no longer pending), as the protocol sends it back to the model. `images` (read_file
        on an image) follow the turn's last result in a user message of their own: every provider takes images
        there (OpenAI's refuses them in a tool result)."""
        self.window.note_result(len(self.messages), call.name)
        self.append(run, self.protocol.result_message(call, content))
        run.pending.pop(call.id, None)
        run.images.extend(images)
        if run.images and not run.pending:
            shown, run.images = tuple(run.images), []
            self.append(run, Message("user", "The images the tool results above returned: "
                                     + " ".join(i.label for i in shown), images=shown))

    def answer_rest(self, run: RunState, denied: ToolCall, reason: str) -> None:
        """Answer the denied call and every call after it, so no tool call is left without a result."""
        self.record_result(run, denied, Envelope.failure(reason).to_json())
        for call in list(run.pending.values()):
            self.record_result(run, call, Envelope.failure(_NOT_RUN).to_json())

    def done(self, run: RunState, message: str, answer: str) -> RunFinished:
        """The model says it is done: a success, unless the last change it attempted failed and none came after."""
        failed = run.failed_change
        if failed is None:
            return self.stop(run, StopReason.DONE, message, answer=answer)
        path = failed["arguments"].get("path", "") if isinstance(failed["arguments"], dict) else ""
        what = f"{failed['tool']} {path}" if path else failed["tool"]
        why = "; ".join(failed["errors"])[:300]
        return replace(self.stop(run, StopReason.CHANGE_FAILED, f"the model stopped after a failed change "
                                                                f"({what}: {why}); nothing was "
                                                                f"changed after it", answer=answer),
                       failed_change=failed)

    def stop(self, run: RunState, reason: StopReason, message: str, answer: str = "") -> RunFinished:
        """The end of `run`, leaving a valid conversation: every pending call answered, and a turn cut short said
        so."""
        for call in list(run.pending.values()):
            self.record_result(run, call, Envelope.failure(f"not run: {message}").to_json())
        if reason in _CUT_SHORT and self.messages and self.messages[-1].role != "assistant":
            self.append(run, Message("assistant", f"(this turn was cut short: {message})"))
        return RunFinished(stop_reason=reason, message=message, answer=answer, steps=run.steps)

    def note(self, text: str) -> MessagesAppended:
        """Between runs: a note from the user's side (an /undo) joins the conversation; the event records it."""
        message = Message("user", text)
        self.messages.append(message)
        return MessagesAppended(messages=(message,))

    def start(self, messages: Iterable[Message] = ()) -> None:
        """A new conversation, from `messages` (a compaction's summary, a resumed session's conversation); the ids
        of the calls before it stay taken."""
        self.messages[:] = list(messages)
        self._ids.update(call.id for message in self.messages for call in message.tool_calls)
        self.window.clear()

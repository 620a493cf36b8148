"""Traces: one more consumer of the event stream. A JSONL file: a header line with `"format": 2`, then one event
per line, flushed as it goes and completed in `finally` (also on Ctrl-C and SIGTERM).

`read_trace` is the strict reader replay and sessions use: an unknown format version, a damaged line or a trace
cut off before its `run_finished` event is a `TraceError` with one line. `Trace.conversation()` is what a resumed
session gets back: the messages every run recorded. `raw_records` gives a trace's lines after the header as the
JSON objects they are (what a change recorded beyond its event: resuming copies them, replay reads the hashes).

Formats, each still read: 1, the events; 2, each run also records the messages it added to the conversation
(`messages_appended`). A run without them (format 1) gives back its prompt and its answer (`_format_1_messages`).
Between runs come a `/clear` or `/compact` (`conversation_reset`) and a note the user's side added (an `/undo`: a
`messages_appended` outside any run); both formats may hold them.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
import uuid
from pathlib import Path
from typing import IO, Any

from cli_agent import __version__
from cli_agent.contracts import (
    ConversationReset,
    Event,
    Message,
    MessagesAppended,
    RunFinished,
    RunStarted,
    TraceError,
    dataclass,
    event_from_dict,
    reset_messages,
)
from cli_agent.fs import TRACE_LIMIT, paths, read_regular

__all__ = ["Trace", "TraceWriter", "default_trace_path", "raw_records", "read_trace"]

FORMAT = 2
READABLE = (1, 2)


def default_trace_path() -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return paths.user_state_dir() / "traces" / f"{stamp}-{uuid.uuid4().hex[:8]}.jsonl"


_SURROGATE = re.compile("[\ud800-\udfff]")

class TraceWriter:
    """Appends events to a trace file. Use as a context manager, or call `close()` in a `finally`."""

    def __init__(self, path: Path, meta: dict[str, Any] | None = None) -> None:
        self.path = path
        self.error: str | None = None
        path.parent.mkdir(parents=True, exist_ok=True)
        self._file: IO[str] | None = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()
        header = {"format": FORMAT, "type": "trace_header", "cli_agent": __version__, "time": round(time.time(), 3)}
        self.write_record(header | (meta or {}))

    def __call__(self, event: Event) -> None:
        self.write_record(event.to_dict())

    def write_record(self, record: dict[str, Any]) -> None:
        """Append one record as it is (a resumed session copies the old trace's records this way). A trace that
        can no longer be written (a full disk, a file size limit) stops there, with `error` saying why: the run
        goes on."""
        if self._file is None:
            return
        line = json.dumps(record, ensure_ascii=False, default=str)
        if _SURROGATE.search(line):  # a lone surrogate (from a model's JSON) is kept as its escape: valid UTF-8
            line = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", line)
        try:
            self._file.write(line + "\n")
            self._file.flush()
        except OSError as exc:
            self.error = f"the trace {self.path} stopped being written: {exc.strerror or exc}"
            file, self._file = self._file, None
            with contextlib.suppress(OSError):
                file.close()

    def close(self) -> None:
        if self._file is None:
            return
        try:
            self._file.flush()
            os.fsync(self._file.fileno())
        finally:
            self._file.close()
            self._file = None

    def __enter__(self) -> TraceWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass(frozen=True)
class Trace:
    header: dict[str, Any]
    events: tuple[Event, ...]

    @property
    def runs(self) -> list[list[Event]]:
        """The events split into runs (a REPL session holds several)."""
        out: list[list[Event]] = []
        for event in self.events:
            if event.type == "run_started" or not out:
                out.append([])
            out[-1].append(event)
        return out

    def conversation(self) -> list[Message]:
        """The conversation as the agent held it after the last run: what each run recorded it added. Old tool
        results the agent had elided to fit the context window come back whole (it elides again when it must). Only what
        follows the last `/clear` or `/compact` (a `ConversationReset`) is live."""
        messages: list[Message] = []
        before: dict[str, list[Message]] = {}  # the conversation as each run found it (a /rewind goes back to one)
        for run in self.runs:
            if run and isinstance(run[0], RunStarted):
                before[run[0].run_id] = list(messages)
            ended = _end_of_run(run)
            recorded = [e for e in run[:ended] if isinstance(e, MessagesAppended)]
            if recorded:
                messages.extend(m for e in recorded for m in e.messages)
            else:
                messages.extend(_format_1_messages(run[:ended]))
            for event in run[ended:]:  # between runs, in order: /clear, /compact, /rewind, and notes (an /undo)
                if isinstance(event, ConversationReset) and event.kind == "rewind":
                    messages = list(before.get(event.run_id, messages))
                elif isinstance(event, ConversationReset):
                    messages = reset_messages(event)
                elif isinstance(event, MessagesAppended):
                    messages.extend(event.messages)
        return messages


def _end_of_run(events: list[Event]) -> int:
    """Where the events between runs start in `events` (a run's, or those before the first run): after the run's
    `run_finished`, or at the start when no run has started."""
    if not events or not isinstance(events[0], RunStarted):
        return 0
    return next((i + 1 for i, e in enumerate(events) if isinstance(e, RunFinished)), len(events))


def _between_runs(events: tuple[Event, ...]) -> set[int]:
    """The indexes of the events that come between runs: resets, and notes outside any run."""
    between, running = set(), False
    for index, event in enumerate(events):
        if isinstance(event, RunStarted | RunFinished):
            running = isinstance(event, RunStarted)
        elif isinstance(event, ConversationReset) or (isinstance(event, MessagesAppended) and not running):
            between.add(index)
    return between


def _format_1_messages(run: list[Event]) -> list[Message]:
    """A run of a format-1 trace, which did not record its messages: its prompt and its answer."""
    started, finished = run[0], run[-1]
    if not isinstance(started, RunStarted) or not isinstance(finished, RunFinished):
        return []
    answer = finished.answer or f"(this turn ended: {finished.message})"
    return [Message("user", started.prompt), Message("assistant", answer)]


def read_trace(path: Path, *, complete: bool = True) -> Trace:
    """Read and check a trace; `complete` requires it to end with a `run_finished` event."""
    try:
        lines = read_regular(path, TRACE_LIMIT).decode("utf-8").splitlines()
    except OSError as exc:
        raise TraceError(f"{path}: cannot read the trace: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise TraceError(f"{path}: cannot read the trace: not UTF-8 text (byte {exc.start})") from None
    if not lines:
        raise TraceError(f"{path}: the trace is empty")
    records = []
    for number, line in enumerate(lines, 1):
        try:
            record = json.loads(line)
        except json.JSONDecodeError as exc:
            raise TraceError(f"{path}:{number}: damaged line ({exc.msg}); the trace is truncated or edited") from exc
        if not isinstance(record, dict):
            raise TraceError(f"{path}:{number}: a trace line must be a JSON object")
        records.append(record)
    header = records[0]
    if header.get("type") != "trace_header":
        raise TraceError(f"{path}:1: not a cli-agent trace (no header line)")
    if header.get("format") not in READABLE:
        raise TraceError(f"{path}: unknown trace format {header.get('format')!r}; this cli-agent reads formats "
                         f"{', '.join(map(str, READABLE))}")
    events = []
    for number, record in enumerate(records[1:], 2):
        try:
            events.append(event_from_dict(record))
        except (KeyError, ValueError, TypeError) as exc:
            raise TraceError(f"{path}:{number}: damaged event ({type(exc).__name__}: {exc})") from exc
    between = _between_runs(tuple(events))
    last = next((e for i, e in reversed(list(enumerate(events))) if i not in between), None)
    if complete and not isinstance(last, RunFinished):
        raise TraceError(f"{path}: the trace is truncated (it does not end with run_finished)")
    return Trace(header, tuple(events))


def raw_records(path: Path) -> list[dict[str, Any]]:
    """The trace's records after its header, as written (read after `read_trace` has checked the file)."""
    return [json.loads(line) for line in read_regular(path, TRACE_LIMIT).decode("utf-8").splitlines()[1:]]

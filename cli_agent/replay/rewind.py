"""Rewinding a copy of a workspace to how it was before a recorded session, for replay.

A trace records the workspace's path, not its content, and by the time a session is replayed the folder holds what
the runs left. `copy_workspace` copies it (`fs.copy`: bounded, never into itself; links kept as links, FIFOs and
devices left out, absolute links into the original pointed into the copy); `rewind` undoes the recorded changes in
the copy, newest first. Each change in the trace carries the sha256 of the file before and after it, so a file is
put back only when it is exactly as the change left it and its earlier bytes can be rebuilt and verified: a created
file is removed (with the folders it leaves empty), an edit is reversed (`new` back to `old`), and a rewritten or
deleted file gets back content the trace holds (an earlier create or write, or a whole read). The files are read and
written through a `Workspace` on the copy, by the reversal engine undo uses (`history.undo.reverting_change`). Fact
proposals the runs made are withdrawn. Every file left as it is gets a note.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import (
    Event,
    RunStarted,
    SubagentEvent,
    ToolCall,
    ToolCallsProposed,
    ToolError,
    ToolResult,
    errors,
    event_from_dict,
    sha_of,
)
from cli_agent.facts import FactStore
from cli_agent.fs import DEFAULT_PROTECTED, CopyLimits, CopyTooBig, Workspace, copy_tree, textfile
from cli_agent.history import Trace, current_bytes, remove_empty_dirs, reverting_change
from cli_agent.tools import replace_text

if TYPE_CHECKING:
    from cli_agent.fs import Workspace

COPY_LIMITS = CopyLimits(max_files=100_000, max_bytes=2 << 30)  # a replay copies a project, not a disk


def copy_workspace(original: Path, tmp: Path) -> Path:
    """A copy of `original` (same folder name: the prompt names it) with links kept as links; links pointing into
    the original by absolute path point into the copy instead, so the replay never reaches the original."""
    copy = tmp / original.name
    try:
        copy_tree(original, copy, limits=COPY_LIMITS)
    except CopyTooBig as exc:
        raise errors.UsageError(f"cannot copy the workspace {original} for the replay: {exc}") from None
    except OSError as exc:
        raise errors.UsageError(f"cannot copy the workspace {original} for the replay: {exc}") from exc
    real = os.path.realpath(original)
    for folder, dirs, files in os.walk(copy):
        for name in dirs + files:
            link = os.path.join(folder, name)
            target = os.readlink(link) if os.path.islink(link) else ""
            for root in (str(original), real):
                if os.path.isabs(target) and (target == root or target.startswith(root + os.sep)):
                    os.unlink(link)
                    os.symlink(str(copy) + target[len(root):], link)
                    break
    return Path(os.path.realpath(copy))


def rewind(copy: Path, trace: Trace, raw: list[dict[str, Any]]) -> list[str]:
    """Undo the recorded changes in the copy, newest first, each only if the file is exactly as the change left
    it and its earlier bytes can be rebuilt (their sha256 is in the trace). Returns a note per file left as is."""
    calls: dict[str, ToolCall] = {}
    changes: list[tuple[ToolCall | None, dict[str, Any]]] = []
    known: list[bytes] = []
    proposals: list[str] = []
    for event, record in _unnested(trace.events, raw):
        if isinstance(event, RunStarted):
            calls = {}
        elif isinstance(event, ToolCallsProposed):
            calls.update({c.id: c for c in event.calls})
            for c in event.calls:
                content = (c.arguments or {}).get("content")
                if isinstance(content, str):
                    known += [content.encode(), content.replace("\n", "\r\n").encode()]
        elif isinstance(event, ToolResult) and event.envelope.ok:
            data = event.envelope.data if isinstance(event.envelope.data, dict) else {}
            if isinstance(record.get("change"), dict):
                changes.append((calls.get(event.call_id), record["change"]))
            elif isinstance(record.get("changes"), list) and record["changes"]:  # a command's change set, applied
                changes += [(None, change) for change in record["changes"] if isinstance(change, dict)]
            elif event.tool == "read_file" and isinstance(data.get("content"), str):
                known += [data["content"].encode(), (data["content"] + "\n").encode()]
            elif event.tool == "propose_fact" and data.get("status") == "pending":
                proposals.append(str(data.get("id")))

    workspace = Workspace(copy, protected=DEFAULT_PROTECTED)
    notes = [note for call, change in reversed(changes) if (note := _undo(workspace, call, change, known))]
    _withdraw(copy, proposals)
    return notes


def _unnested(events: Any, raw: list[dict[str, Any]]) -> Any:
    """The events with their records; a sub-task's proposed calls and results (the task tool's helper) as its own,
    in their place: what the helper wrote is undone as the parent's changes are."""
    for event, record in zip(events, raw, strict=False):
        inner = record.get("event") if isinstance(event, SubagentEvent) else None
        if isinstance(inner, dict) and inner.get("type") in ("tool_calls_proposed", "tool_result"):
            with contextlib.suppress(KeyError, ValueError, TypeError):
                unwrapped: Event = event_from_dict(inner)
                yield unwrapped, inner
                continue
        yield event, record


def _undo(workspace: Workspace, call: ToolCall | None, change: dict[str, Any], known: list[bytes]) -> str | None:
    rel = str(change.get("path", ""))
    try:
        now = current_bytes(workspace, rel)
    except ToolError as exc:
        return f"{rel}: not rewound ({exc.message})"
    if sha_of(now) != change.get("after_sha256"):
        return f"{rel}: changed since the run, so the replay starts from its current content"
    before = change.get("before_sha256")
    candidates = list(known)
    if now is not None and call is not None and change.get("kind") == "edit":
        candidates.insert(0, _unedit(now, call, rel))
    restored = None if before == "-" else next((d for d in candidates if d and sha_of(d) == before), b"")
    if restored == b"":
        return f"{rel}: the trace does not hold its content from before {change.get('tool')}; the replay starts " \
               "from the content the run left"
    try:
        workspace.apply(reverting_change(rel, now, restored, mode=None, summary="rewind"))
    except ToolError as exc:
        return f"{rel}: not rewound ({exc.message})"
    if restored is None:  # create_file makes missing parents; the trace doesn't say which existed before
        parents = rel.split("/")[:-1]
        remove_empty_dirs(workspace.root, ("/".join(parents[:n]) for n in range(1, len(parents) + 1)))
    return None


def _unedit(after: bytes, call: ToolCall, rel: str) -> bytes:
    """`after` with the edit_file call's `new` turned back into `old` (b"" when that can't be done)."""
    args = call.arguments or {}
    fmt = textfile.detect(after)
    if fmt is None or not isinstance(args.get("old"), str) or not isinstance(args.get("new"), str):
        return b""
    try:
        done = replace_text(textfile.decode(after, fmt), args["new"], args["old"], newline=fmt.newline,
                            replace_all=bool(args.get("replace_all")), path=rel)
        return textfile.encode(done.text, fmt)
    except Exception:  # an edit that doesn't reverse cleanly leaves the file as the run left it
        return b""


def _withdraw(copy: Path, proposals: list[str]) -> None:
    """Take back the fact proposals the runs made, and the draft file if nothing else is in it."""
    if not proposals:
        return

    store = FactStore(copy)
    try:
        for proposal in proposals:
            if any(p.id == proposal for p in store.pending()):
                store.reject(proposal)
        if not store.pending():
            store.draft_path.unlink(missing_ok=True)
            if not any(store.folder.iterdir()):
                store.folder.rmdir()
    except (errors.CliAgentError, OSError):
        pass

"""The dispatcher: a tool call in, an envelope out, and no exception ever escapes.

`prepare` checks the tool is allowed, validates the arguments against the spec's JSON Schema (jsonschema does the
validating) and, for a mutating tool, plans the change without writing. `execute` runs a read-only tool or applies
the planned change. Between the two the loop asks for approval, so what is approved is exactly what is written.

A command tool (`runs_command` in its spec) is prepared `deferred`: `stage` runs it (in the sandbox, yielding its
output as it comes) and turns what it changed into a `Staged` set, which is then approved and applied like one
change. A `Staged` set with no changes needs no approval.
"""

from __future__ import annotations

import contextlib
import dataclasses
import difflib
import os
import time
from collections.abc import Collection, Generator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cli_agent.contracts import Change, ChangeKind, Envelope, Staged, ToolCall, ToolError, ToolResult, dataclass
from cli_agent.instructions import nested_instructions
from cli_agent.tools.handlers.syntax_guard import broken_by, unreachable_by
from cli_agent.tools.schema_check import CheckStopped, check
from cli_agent.tools.web.address import plainly_refused

if TYPE_CHECKING:
    from cli_agent.tools.context import ToolContext
    from cli_agent.tools.registry import Registry
    from cli_agent.tools.specs import ToolSpec

__all__ = ["Dispatcher", "Prepared"]


@dataclass(frozen=True)
class Prepared:
    """A call ready to run (`error` is None) or already answered by an error envelope; `invalid`: the call itself
    is wrong (an unknown tool, arguments its schema refuses), not what running it met."""

    call: ToolCall
    spec: ToolSpec | None = None
    change: Change | None = None
    error: Envelope | None = None
    invalid: bool = False
    staged: Staged | None = None  # several changes approved as one (a command's change set, a rename)
    deferred: bool = False  # a command not run yet (see Dispatcher.stage)
    blocked: bool = False  # a before_tool hook stopped it: the hook's doing, not a failure of the run's work

    @property
    def arguments(self) -> dict[str, Any]:
        return self.call.arguments or {}

    @property
    def changes(self) -> tuple[Change, ...]:
        if self.staged is not None:
            return self.staged.changes
        return (self.change,) if self.change is not None else ()

    @property
    def approval_kind(self) -> ChangeKind | Literal["command"] | None:
        """What the policy weighs: "command" before a command runs, else the kind of change."""
        if self.deferred:
            return "command"
        if self.staged is not None:
            return self.staged.kind
        return self.change.kind if self.change is not None else None

    def result(self, envelope: Envelope, model_chars: int = 0) -> ToolResult:
        """The ToolResult event of this call once it ran, with what it wrote (a staged set's applied part);
        `model_chars`: where the result was cut for the model (0: it was not)."""
        applied = set((envelope.data or {}).get("applied", ())) if isinstance(envelope.data, dict) else set()
        return ToolResult(call_id=self.call.id, tool=self.call.name, envelope=envelope,
                          change=self.change if envelope.ok else None,
                          changes=tuple(c for c in self.changes if self.staged is not None and c.path in applied),
                          model_chars=model_chars)

    @property
    def needs_approval(self) -> bool:
        if self.spec is None or not self.spec.requires_approval:
            return False
        return self.deferred or self.staged is None or bool(self.staged.changes)

    def denial_note(self) -> str:
        """What a denial left undone, for the model: the files of a staged set that were not applied."""
        if self.staged is None or not self.staged.changes:
            return ""
        paths = self.staged.paths()
        shown = ", ".join(paths[:20]) + (f" and {len(paths) - 20} more" if len(paths) > 20 else "")
        return f"; these changes were discarded, not applied: {shown}"


def _describe(error: Any) -> str:
    """One line per jsonschema error, naming the field and what was expected."""
    where = ".".join(str(p) for p in error.absolute_path)
    if error.validator == "required":
        return f"missing required argument: {error.message.split(' is a required')[0]}"
    if error.validator == "additionalProperties":
        return f"unknown argument: {error.message}"
    if error.validator == "type":
        return f"argument '{where}': expected {error.validator_value}, got {type(error.instance).__name__}" \
               f" ({error.message})"
    return f"argument '{where or '(root)'}': {error.message}"


class Dispatcher:
    def __init__(self, registry: Registry, ctx: ToolContext, allowed: Collection[str] | None = None) -> None:
        self.registry = registry
        self.ctx = ctx
        self.allowed = tuple(allowed) if allowed is not None else tuple(registry.names())

    def only(self, names: Collection[str]) -> Dispatcher:
        """A dispatcher that allows only `names` (a workflow step's tool subset)."""
        return Dispatcher(self.registry, self.ctx, [n for n in self.allowed if n in set(names)])

    def at(self, deadline: float | None) -> Dispatcher:
        """A dispatcher whose tools stop their long work (a search, a hint) at `deadline` (`time.monotonic()`)."""
        if deadline == self.ctx.deadline:
            return self
        return Dispatcher(self.registry, self.ctx.at(deadline), self.allowed)

    def unchecked_reads(self) -> Dispatcher:
        """The same dispatcher for a person's own call (`tools run`, a workflow step): no read-before-edit."""
        return Dispatcher(self.registry, dataclasses.replace(self.ctx, seen=None), self.allowed)

    def prepare(self, call: ToolCall) -> Prepared:
        if not call.name:
            return Prepared(call, error=Envelope.failure(
                "the tool call has an empty name", data={"available_tools": list(self.allowed)}), invalid=True)
        if call.name not in self.allowed:
            close = difflib.get_close_matches(call.name, self.allowed, n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            return Prepared(call, error=Envelope.failure(
                f"unknown tool {call.name!r}.{hint} Available tools: {', '.join(self.allowed)}",
                data={"available_tools": list(self.allowed)}), invalid=True)
        spec = self.registry.get(call.name)
        if call.arguments is None:
            return Prepared(call, spec, error=Envelope.failure(
                f"the arguments of {call.name} are not a JSON object: {call.error or 'unreadable'}",
                data={"expected_parameters": spec.parameters}), invalid=True)
        problems = self._validate(spec, call.arguments)
        if problems:
            return Prepared(call, spec, error=Envelope.failure(
                *problems, data={"expected_parameters": spec.parameters}), invalid=True)
        if not spec.mutates:
            refused = self._plainly_refused(spec, call.arguments)
            return Prepared(call, spec, error=Envelope.failure(refused) if refused else None)
        if spec.runs_command:
            return Prepared(call, spec, deferred=True)
        try:
            change = self._run_handler(spec, call.arguments)
        except ToolError as exc:
            return Prepared(call, spec, error=Envelope.failure(exc.message, data=exc.hints or None))
        except Exception as exc:  # a handler bug must not take the loop down
            return Prepared(call, spec, error=Envelope.failure(f"{call.name} failed: {type(exc).__name__}: {exc}"))
        if isinstance(change, Staged):
            return Prepared(call, spec, staged=change)
        if not isinstance(change, Change):
            return Prepared(call, spec, error=Envelope.failure(f"{call.name} did not plan a change"))
        broken = _broken_by(change) if self.ctx.syntax_check else None
        if broken is not None:
            return Prepared(call, spec, error=Envelope.failure(broken))
        dead = _unreachable_by(change) if self.ctx.syntax_check else None
        return Prepared(call, spec, change=replace(change, warnings=(dead,)) if dead else change)

    def _plainly_refused(self, spec: ToolSpec, arguments: dict[str, Any]) -> str | None:
        """A web page's address that may not be reached, when the URL alone says so: refused before any question."""
        if spec.approval_scope != "host":
            return None
        return plainly_refused(str(arguments.get("url", "")), self.ctx.web.allow_private if self.ctx.web else False)

    def read_ahead(self, calls: Sequence[ToolCall]) -> dict[int, tuple[Prepared, Envelope]]:
        """Run the read-only calls that come before the turn's first other call at the same time; by position.
        The rest run in order as usual, so a read after an edit of the same turn sees the edit."""
        from concurrent.futures import ThreadPoolExecutor  # deferred: a thread pool, only for calls run side by side

        leading: list[tuple[int, Prepared]] = []
        for index, call in enumerate(calls):
            spec = self.registry.get(call.name) if call.name in self.allowed else None
            if spec is None or spec.mutates or spec.requires_approval or spec.updates_plan or spec.runs_agent:
                break
            leading.append((index, self.prepare(call)))
        if len(leading) < 2:
            return {}
        with ThreadPoolExecutor(max_workers=min(8, len(leading)), thread_name_prefix="read-ahead") as pool:
            results = list(pool.map(self.execute, [p for _, p in leading]))
        return {index: (prepared, envelope) for (index, prepared), envelope in zip(leading, results, strict=True)}

    def stage(self, prepared: Prepared) -> Generator[bytes, None, Prepared]:
        """Run a deferred command; yields its output as it comes and returns it prepared with its change set."""
        spec = prepared.spec
        assert spec is not None and prepared.deferred
        try:
            staged = yield from self._run_handler(spec, prepared.arguments)
        except ToolError as exc:
            return replace(prepared, deferred=False, error=Envelope.failure(exc.message, data=exc.hints or None))
        except Exception as exc:  # a handler bug must not take the loop down
            return replace(prepared, deferred=False,
                           error=Envelope.failure(f"{spec.name} failed: {type(exc).__name__}: {exc}"))
        return replace(prepared, deferred=False, staged=staged)

    def execute(self, prepared: Prepared) -> Envelope:
        if prepared.error is not None:
            return prepared.error
        spec = prepared.spec
        assert spec is not None
        if prepared.deferred:
            return Envelope.failure(f"{spec.name} runs only inside an agent run (cli-agent -p, the REPL, or !COMMAND "
                                    f"in the REPL), where its change set can be approved")
        try:
            if prepared.change is not None:
                self.ctx.workspace.apply(prepared.change)
                return self._with_instructions(Envelope.success(_change_result(prepared.change),
                                                                warnings=prepared.change.warnings))
            if prepared.staged is not None:
                return self._apply_staged(prepared.staged)
            return self._with_instructions(_wrap(self._run_handler(spec, prepared.arguments)))
        except ToolError as exc:
            return Envelope.failure(exc.message, data=exc.hints or None)
        except Exception as exc:
            return Envelope.failure(f"{spec.name} failed: {type(exc).__name__}: {exc}")

    def apply_set(self, staged: Staged) -> Envelope:
        """Apply a change set already approved (a candidate's, agent.judge.attempts) as a command's set is applied."""
        return self._apply_staged(staged)

    def run(self, call: ToolCall) -> Envelope:
        """prepare + execute with no approval step (for callers that already decided)."""
        return self.execute(self.prepare(call))

    def _apply_staged(self, staged: Staged) -> Envelope:
        """Apply the deletes, then remove the folders they emptied, then the rest (so a set that makes a folder a
        file, or a file a folder, applies whole); one change that fails is reported and the rest still go ahead
        (every applied one is in the undo journal). The result lists exactly what was applied; each path refused
        when staged (a link, an odd name, a lock) is a warning naming it and why, and a change that fails now makes
        the result a failure naming it."""
        applied: list[str] = []
        failed: list[str] = []
        refused = tuple(f"not applied: {path}: {why}" for path, why in staged.refused)
        deletes = [c for c in staged.changes if c.kind == "delete"]
        for change in [*deletes, None, *(c for c in staged.changes if c.kind != "delete")]:
            if change is None:  # the deletes are done: their emptied folders go before anything takes their place
                for folder in staged.removed_dirs:
                    with contextlib.suppress(OSError, ToolError):
                        rel = self.ctx.workspace.relative(folder)
                        if self.ctx.workspace.is_dir(rel) and not os.path.islink(self.ctx.workspace.root / rel):
                            os.rmdir(self.ctx.workspace.root / rel)
                continue
            try:
                self.ctx.workspace.apply(change)
                applied.append(change.path)
            except ToolError as exc:
                failed.append(f"{change.path}: {exc.message}")
        data = dict(staged.data)
        if staged.changes:
            data["applied"] = applied
        if failed:
            data["not_applied"] = failed
            return Envelope.failure(*(f"not applied: {f}" for f in failed), data=data, warnings=refused)
        return Envelope.success(data, warnings=refused)

    def _with_instructions(self, envelope: Envelope) -> Envelope:
        """A file read or changed in a folder with instructions of its own (pkg/AGENTS.md, not in the system
        prompt): their text joins the result, once a conversation."""
        seen, data = self.ctx.seen, envelope.data
        if seen is None or not envelope.ok or not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return envelope
        nested = nested_instructions(self.ctx.workspace, data["path"], seen.instructions, Path.cwd())
        if not nested:
            return envelope
        seen.instructions.update(path for path, _ in nested)
        said = [f"{path} (instructions for the files under its folder; follow them):\n{text}" for path, text in nested]
        return dataclasses.replace(envelope, data={**data, "instructions": "\n\n".join(said)})

    def _validate(self, spec: ToolSpec, arguments: dict[str, Any]) -> list[str]:
        """What is wrong with the arguments; the check is bounded in time (cli_agent.tools.schema_check) and stops at
        the run's deadline, refusing what it could not settle."""
        try:
            return [_describe(e) for e in check(spec.parameters, arguments, until=self.ctx.deadline)]
        except CheckStopped as exc:
            late = self.ctx.deadline is not None and time.monotonic() >= self.ctx.deadline
            return [f"the arguments of {spec.name} were not accepted: {exc}"
                    + (" (the run's deadline was reached)" if late else "")]

    def _run_handler(self, spec: ToolSpec, arguments: dict[str, Any]) -> Any:
        return self.registry.handler(spec.name)(self.ctx, **arguments)


def _wrap(result: Any) -> Envelope:
    if isinstance(result, Envelope):
        return result
    images = getattr(result, "images", ())  # read_file on an image (handlers.files.ImageRead)
    if isinstance(result, dict) and "warnings" in result:
        data = dict(result)
        warnings = data.pop("warnings") or ()
        return Envelope.success(data, warnings=tuple(warnings), images=images)
    return Envelope.success(dict(result) if images else result, images=images)


def _broken_by(change: Change) -> str | None:
    return broken_by(change)


def _unreachable_by(change: Change) -> str | None:
    return unreachable_by(change)


def _change_result(change: Change) -> dict[str, Any]:
    added, removed = change.stats()
    verb = {"create": "created", "edit": "edited", "write": "wrote", "delete": "deleted"}[change.kind]
    return {"path": change.path, "action": verb, "summary": change.summary,
            "lines_added": added, "lines_removed": removed}

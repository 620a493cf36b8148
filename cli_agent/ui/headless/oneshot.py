"""One task, then exit: `cli-agent -p TEXT`, `cli-agent workflow run NAME [ARGS...]` and `cli-agent tools run NAME
JSON_ARGS`."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import (
    Envelope,
    Event,
    EventStream,
    ToolCall,
    ToolResult,
    errors,
    is_interactive,
    json_for_output,
)
from cli_agent.fs import Workspace
from cli_agent.history import load_resumable
from cli_agent.instructions import load_skills
from cli_agent.providers import NoModel
from cli_agent.session import drive, images_for, open_session, resume_into, with_images
from cli_agent.ui.headless.printers import JsonReport, output_sink, warn

if TYPE_CHECKING:
    from cli_agent.agent import Approver
    from cli_agent.config import Settings
    from cli_agent.session import Session
    from cli_agent.ui.headless.printers import JsonReport

__all__ = ["run_one_shot", "run_tool", "run_workflow_command"]


def read_task(prompt: str) -> str:
    if prompt != "-":
        text = prompt
    else:
        try:
            text = sys.stdin.read()
        except UnicodeDecodeError as exc:
            raise errors.UsageError(f"the task on stdin is not valid text: {exc.reason}") from exc
    if not text.strip():
        raise errors.UsageError("the task is empty: pass -p TEXT, or -p - with the task on stdin")
    return text


def approver_for(interactive: bool, console: Any = None) -> Any:
    """The terminal's approval question, without the answers that grant for the rest of a session (a one-shot run
    has no later turn); None for a run no one watches (the policy denies before asking, and the loop denies a
    question no one answers)."""
    if not interactive:
        return None
    # deferred: the terminal renderer (Rich), only when stdout is a terminal
    from cli_agent.ui.view import TerminalApprover

    return TerminalApprover(console, session_scoped=False)


def _terminal_renderer(session: Any) -> Any:
    """The REPL's renderer, for `--output text` on a terminal: the same panels, one-line reads, spinner and
    Markdown answer."""
    from rich.console import Console  # deferred: Rich is not on a one-shot run's path

    from cli_agent.ui.view import Renderer  # deferred: the terminal renderer (Rich), only when stdout is a terminal

    registry = session.registry

    def compact(tool: str) -> bool:
        if tool not in registry.names():
            return False
        spec = registry.get(tool)
        return not spec.mutates and not spec.requires_approval

    return Renderer(Console(highlight=False), compact=compact, one_shot=True)


def run_one_shot(settings: Settings, prompt: str, *, provider_factory: Any, resume: str | None = None,
                 notes: Sequence[str] = (), images: Sequence[str] = ()) -> int:
    """`cli-agent -p TEXT`; `resume`: continue that session (session_index.LATEST or an id) instead of a new one;
    `notes`: the loader's warnings (for `--output json`); `images`: files given with --image (with the task's
    `@shot.png`, they go to the model as image parts)."""
    text = read_task(prompt)
    resumed = None
    if resume is not None:
        resumed = load_resumable(settings.workspace, resume)  # a missing or damaged trace: exit 2 before anything

    slash = _slash_command(settings, text)

    def start(session: Session, approve: Approver) -> tuple[EventStream, JsonReport]:
        if resumed is not None:
            resume_into(session, *resumed)
        if slash is not None:
            return slash(session, approve)
        parts = images_for(text, session.workspace, images, session.provider)
        return (session.run(with_images(text, parts), approve, images=parts),
                JsonReport(trace=str(session.trace_path), notes=session.notes))

    return _run_session(settings, provider_factory, start, notes)


def _slash_command(settings: Settings, text: str) -> Callable[[Session, Approver], tuple[EventStream, JsonReport]] \
        | None:
    """`-p "/NAME ARGS"`: the workflow NAME (a bad argument: exit 2 before a model is made), else the skill NAME;
    None when NAME is neither (the text is then the task as it is)."""
    name, _, rest = text.strip()[1:].partition(" ") if text.lstrip().startswith("/") else ("", "", "")
    if not name or "/" in name:
        return None
    # deferred: workflows, only for a `/NAME` task
    from cli_agent.workflows import load_workflows, missing_message, parse_arguments, run_workflow

    workspace = Workspace(settings.workspace, locks=tuple(settings.locks))
    workflow = load_workflows(workspace).get(name)
    skill = load_skills(workspace.root).get(name)
    typed = " ".join(text.split())
    if workflow is not None:
        if skill is not None:
            warn([f"/{name} runs the workflow {name}; the skill of the same name is left out"], "")
        values, missing = parse_arguments(workflow, rest, workspace)
        if missing:
            raise errors.WorkflowError(missing_message(workflow, missing))
        return lambda session, approve: (
            run_workflow(session, workflow, values, approve, command=typed),
            JsonReport(trace=str(session.trace_path), notes=session.notes, extra={"workflow": workflow.name}))
    if skill is None:
        return None
    task = skill.prompt(workspace.root, rest)
    return lambda session, approve: (
        session.run(task, approve, command=typed),
        JsonReport(trace=str(session.trace_path), notes=session.notes, extra={"skill": skill.name}))


def run_workflow_command(settings: Settings, name: str, args: Sequence[str], *, provider_factory: Any,
                         notes: Sequence[str] = (), trusted: bool | None = None) -> int:
    """`cli-agent workflow run NAME [ARGS...]`: a missing or bad argument is a WorkflowError (exit 2) before a
    provider is even made. `trusted`: the folder's trust (None: as the environment and the trust store say)."""
    # deferred: workflows, only for a `/NAME` task
    from cli_agent.workflows import load_workflows, missing_message, parse_tokens, run_workflow

    workspace = Workspace(settings.workspace, locks=tuple(settings.locks))
    catalog = load_workflows(workspace, trusted=trusted)
    warn(catalog.errors, "skipped a broken workflow file: ")
    workflow = catalog.require(name)
    values, missing = parse_tokens(workflow, args, workspace)
    if missing:
        raise errors.WorkflowError(missing_message(workflow, missing))

    def start(session: Session, approve: Approver) -> tuple[EventStream, JsonReport]:
        report = JsonReport(trace=str(session.trace_path), notes=session.notes,
                            extra={"workflow": workflow.name, "arguments": values})
        return run_workflow(session, workflow, values, approve), report

    return _run_session(settings, provider_factory, start, notes)


def _run_session(settings: Settings, provider_factory: Any,
                 start: Callable[[Session, Approver], tuple[EventStream, JsonReport]], notes: Sequence[str]) -> int:
    """Open a session, drive the events `start` gives to the trace and the `--output` printer, close it; a run
    that did not finish "done" raises its error (the exit code)."""
    interactive = is_interactive()
    session = open_session(settings, interactive=interactive, provider_factory=provider_factory, notes=notes)
    try:
        renderer = _terminal_renderer(session) if settings.output == "text" and sys.stdout.isatty() else None
        events, report = start(session, approver_for(interactive, renderer.console if renderer is not None else None))
        try:
            finished = drive(events, session.trace, renderer or output_sink(settings.output, report,
                                                                     planning=settings.mode == "plan"))
        finally:
            if renderer is not None:
                renderer.close()
        if settings.output == "json":
            report.end(finished)
    finally:
        _close(session)
    error = finished.error()
    if error is not None:
        error.reported = settings.output == "json"
        raise error
    return 0


def run_tool(settings: Settings, name: str, json_args: str) -> int:
    """`cli-agent tools run`: one call through the loop's `run_call` (the dispatcher, the approval policy, the undo
    journal, a trace), with no model; the envelope is printed as JSON."""
    try:
        arguments = json.loads(json_args)
    except json.JSONDecodeError as exc:
        raise errors.UsageError(f"JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(arguments, dict):
        raise errors.UsageError("JSON_ARGS must be a JSON object, e.g. '{\"path\": \"README.md\"}'")
    interactive = is_interactive()
    session = open_session(settings, interactive=interactive, provider_factory=lambda s: NoModel())
    events: list[Event] = []
    try:
        finished = drive(session.run_call(ToolCall("cli", name, arguments, json_args), approver_for(interactive)),
                         session.trace, events.append)
    finally:
        _close(session)
    result = next((e for e in events if isinstance(e, ToolResult)), None)
    envelope = result.envelope if result is not None else Envelope.failure("denied: " + finished.message)

    sys.stdout.write(json_for_output(envelope.to_dict(), indent=2) + "\n")
    error_class = finished.stop_reason.error_class
    if error_class is not None:
        error = error_class("; ".join(envelope.errors) or finished.message)
        error.reported = True  # the envelope on stdout says so
        raise error
    return 0


def _close(session: Session) -> None:
    """Close the session; a trace that stopped being written is said on stderr."""
    session.close()
    warn([session.trace.error] if session.trace.error else [], "")

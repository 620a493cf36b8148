"""One task, then exit: `cli-agent -p TEXT` and `cli-agent tools run NAME JSON_ARGS`."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from cli_agent import errors
from cli_agent.events import ApprovalAsked, Decision

if TYPE_CHECKING:
    from cli_agent.config import Settings

__all__ = ["approver_for", "deny_all", "read_task", "run_one_shot", "run_tool"]


def deny_all(asked: ApprovalAsked) -> Decision:
    """The approver of a run no one watches: the policy denies before asking, so this is a last guard."""
    return Decision.NO


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


def approver_for(interactive: bool) -> Any:
    """The terminal's approval question, or `deny_all` for a run no one watches."""
    if not interactive:
        return deny_all
    from cli_agent.ui.approve import TerminalApprover

    return TerminalApprover()


def run_one_shot(settings: Settings, prompt: str, *, provider_factory: Any, resume: str | None = None) -> int:
    """`resume`: continue that session (sessions.LATEST or an id) instead of starting a new one."""
    from cli_agent.session import drive, error_for, is_interactive, open_session
    from cli_agent.ui.headless import JsonReport, output_sink

    text = read_task(prompt)
    interactive = is_interactive()
    resumed = None
    if resume is not None:
        from cli_agent.sessions import load_resumable, resume_into

        resumed = load_resumable(settings.workspace, resume)  # a missing or damaged trace: exit 2 before anything
    session = open_session(settings, interactive=interactive, provider_factory=provider_factory)
    try:
        if resumed is not None:
            resume_into(session, *resumed)
        sink = output_sink(settings.output, JsonReport(trace=str(session.trace_path), notes=session.notes))
        finished = drive(session.run(text, approver_for(interactive)), session.trace, sink)
    finally:
        session.close()
    error = error_for(finished)
    if error is not None:
        raise error
    return 0


def run_tool(settings: Settings, name: str, json_args: str) -> int:
    """One call through the dispatcher and the approval policy; the envelope is printed as JSON."""
    from cli_agent.approval import ApprovalMode, CallFacts, Policy, Verdict, assess
    from cli_agent.dispatch import Dispatcher
    from cli_agent.envelope import Envelope
    from cli_agent.facts import workspace_for
    from cli_agent.messages import ToolCall
    from cli_agent.registry import Registry
    from cli_agent.session import is_interactive
    from cli_agent.tools import ToolContext

    try:
        arguments = json.loads(json_args)
    except json.JSONDecodeError as exc:
        raise errors.UsageError(f"JSON_ARGS is not valid JSON: {exc.msg} at column {exc.colno}") from exc
    if not isinstance(arguments, dict):
        raise errors.UsageError("JSON_ARGS must be a JSON object, e.g. '{\"path\": \"README.md\"}'")
    from cli_agent.journal import Journal

    registry = Registry.builtin()
    journal = Journal(settings.workspace)  # `tools run` writes are journaled too: one call, one turn (issue 9)
    journal.begin_turn("tools-run")
    workspace = workspace_for(settings, before_write=journal.record)
    dispatcher = Dispatcher(registry, ToolContext(workspace))
    call = ToolCall("cli", name, arguments, json_args)
    prepared = dispatcher.prepare(call)
    code = 0
    if prepared.error is not None:
        envelope = prepared.error
        code = 2 if prepared.spec is None or "argument" in " ".join(envelope.errors) else 1
    else:
        assert prepared.spec is not None
        interactive = is_interactive()
        policy = Policy(mode=ApprovalMode(settings.approval), interactive=interactive, yes=settings.yes)
        kind = prepared.change.kind if prepared.change else None
        verdict = assess(CallFacts(name, prepared.spec.requires_approval, kind), policy)
        allowed = verdict.verdict is Verdict.ALLOW
        if verdict.verdict is Verdict.ASK:
            allowed = approver_for(True)(ApprovalAsked(call=call, change=prepared.change, index=1, total=1)).approves
        if allowed:
            envelope = dispatcher.execute(prepared)
            code = 0 if envelope.ok else 1
        else:
            why = (f"denied: {name} needs approval; re-run with {verdict.rule}"
                   if verdict.verdict is Verdict.DENY else f"denied: {name} was refused by the user")
            envelope = Envelope.failure(why)
            code = 3
    sys.stdout.write(json.dumps(envelope.to_dict(), ensure_ascii=False, indent=2, default=str) + "\n")
    if code:
        raise _error_with_code(code, "; ".join(envelope.errors) or "the tool failed")
    return 0


def _error_with_code(code: int, message: str) -> errors.CliAgentError:
    cls = {1: errors.CliAgentError, 2: errors.UsageError, 3: errors.DeniedError}[code]
    return cls(message)

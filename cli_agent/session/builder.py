"""How a session's parts are made from the settings: the command set-up, the file tools' dispatcher, the approval
policy, the limits and the agent. The CLI's sessions (`open_session`), `cli-agent mcp serve` and the tests' agents
are all built here, so a tool call takes the same path whoever makes it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from cli_agent.agent.approval import ApprovalMode, Policy
from cli_agent.agent.loop import Agent, AgentSetup, Limits

if TYPE_CHECKING:
    from cli_agent.agent.judge.attempts import CandidateRun
    from cli_agent.config.settings import Settings
    from cli_agent.fs.workspace import Workspace
    from cli_agent.hooks import Hooks
    from cli_agent.mcp.attach import McpAttachment
    from cli_agent.providers.base import Provider
    from cli_agent.tools.context import CommandSetup
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.tools.registry import Registry

__all__ = ["agent_for", "command_set", "dispatcher_for", "hooks_for", "limits_for", "policy_for", "start_mcp"]



def policy_for(settings: Settings, *, interactive: bool) -> Policy:
    """The approval policy of the settings; `interactive`: someone can be asked."""
    return Policy(mode=ApprovalMode(settings.approval), interactive=interactive, yes=settings.yes,
                  ask_commands=settings.commands == "ask", unsandboxed=settings.sandbox.mode == "off")


def limits_for(settings: Settings) -> Limits:
    return Limits(max_steps=settings.max_steps, timeout_s=settings.timeout,
                  max_tokens_total=settings.max_tokens_total, max_cost_usd=settings.max_cost_usd,
                  max_retries=settings.max_retries, retry_base_delay=settings.retry_base_delay,
                  tool_result_max_chars=settings.tool_result_max_chars, context_window=settings.context_window)


def dispatcher_for(settings: Settings, workspace: Workspace, registry: Registry, *,
                   commands: CommandSetup | None = None, allowed: list[str] | None = None,
                   track_reads: bool | None = None) -> Dispatcher:
    """The dispatcher of `registry`'s tools over `workspace` (`allowed`: the tools it offers; None: all).
    `track_reads`: an edit needs its file read in the conversation first (None: as `read_before_edit` says)."""
    from cli_agent.tools.dispatch import Dispatcher
    from cli_agent.tools.handlers import ToolContext
    from cli_agent.tools.handlers.seen import SeenFiles
    from cli_agent.tools.web.fetch import WebSetup

    reads = settings.read_before_edit if track_reads is None else track_reads
    context = ToolContext(workspace, seen=SeenFiles() if reads else None, loose_edits=settings.loose_edits,
                          syntax_check=settings.syntax_check, commands=commands,
                          web=WebSetup(allow_private=settings.web.allow_private))
    return Dispatcher(registry, context, allowed=allowed)


def agent_for(settings: Settings, workspace: Workspace, provider: Provider, protocol: str, dispatcher: Dispatcher, *,
              interactive: bool, candidate: CandidateRun | None = None, **overrides: Any) -> Agent:
    """The agent of a session: its prompt planned from the settings (`protocol`: the wire protocol it speaks), the
    task's files shown with the task, and the project's tests judging its changes when they can run. `candidate`:
    how one more candidate runs (a session of its own, `session.open_session`'s), for `attempts` > 1.
    `overrides`: fields of its `AgentSetup` given outright (a test's clock)."""
    from cli_agent.agent.judge.attempts import Attempts
    from cli_agent.agent.judge.bench import Judging
    from cli_agent.agent.judge.verify import verification_for
    from cli_agent.agent.wire import protocol_for
    from cli_agent.prompt.brief import briefer
    from cli_agent.prompt.plan import Planner

    commands, seen = dispatcher.ctx.commands, dispatcher.ctx.seen
    verifier, unverified = verification_for(settings, commands, workspace.root)
    setup = AgentSetup(provider=provider, protocol=protocol_for(protocol), dispatcher=dispatcher,
                       planner=Planner(settings, dispatcher.registry, workspace, protocol),
                       policy=policy_for(settings, interactive=interactive), limits=limits_for(settings),
                       model=settings.model or "", workspace=str(workspace.root),
                       brief=briefer(workspace, seen, files=settings.task_files, repo_map=settings.repo_map)
                       if settings.task_files or settings.repo_map else None,
                       hooks=hooks_for(settings, workspace))
    judging = Judging(verifier=verifier, unverified=unverified, require_verified=settings.verify == "required",
                      attempts=Attempts(settings.attempts, candidate, workspace.root)
                      if verifier and verifier.command and candidate is not None and settings.attempts > 1 else None,
                      task_files=settings.task_files)
    final = replace(setup, **overrides)
    if final.subtasks is None and "task" in dispatcher.allowed:  # the task tool's helpers share this very set-up
        from cli_agent.session.subtask import Subtasks

        final.subtasks = Subtasks(settings, final, judging)
    return Agent(final, judging)


def hooks_for(settings: Settings, workspace: Workspace) -> Hooks | None:
    """The hooks of the settings (`[[hooks]]`: the user config's, and a trusted project's), or None."""
    if not settings.hooks:
        return None
    from cli_agent.hooks import Hooks

    return Hooks(settings.hooks, workspace.root)


def command_set(settings: Settings, workspace: Workspace) -> tuple[CommandSetup | None, list[str]]:
    """The session's command set-up and its notes for the user: commands off or unconfined, the network allowed,
    locks not bound."""
    from cli_agent.tools.handlers.commands import command_setup

    setup = command_setup(settings, workspace)
    if setup is None:
        return None, ["run_command is off: no command sandbox can be set up here (see `cli-agent sandbox`)"]
    notes = list(setup.notes)
    if setup.capability is None:
        notes.insert(0, 'commands run WITHOUT a sandbox (sandbox = "off" in the user config): each one is asked for')
    elif setup.policy.network:
        notes.insert(0, "commands may reach the network (sandbox.network = true)")
    return setup, notes


def start_mcp(settings: Settings, registry: Registry) -> McpAttachment | None:
    """The configured MCP servers, connecting in the background; None (and nothing of the SDK imported) when no
    server is enabled."""
    if not any(server.enabled for server in settings.mcp_servers.values()):
        return None
    from cli_agent.mcp.attach import McpAttachment

    attached = McpAttachment(settings.mcp_servers, registry)
    attached.start()
    return attached

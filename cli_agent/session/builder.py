"""How a session's parts are made from the settings, in one place: `assemble` makes what every front end stands on
(the model default, the undo journal, the workspace, the built-in tools, how commands run), then the file tools'
dispatcher, the approval policy, the limits and the agent. The CLI's sessions (`open_session`: the REPL, -p, ACP,
workflows, eval, replay and attempts' candidates), `cli-agent mcp serve`, `cli-agent prompt` and the tests' agents
are all built here, so a tool call takes the same path whoever makes it. `journal_for` is the one place an undo
journal is opened."""

from __future__ import annotations

import functools
from dataclasses import field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.agent import (
    Agent,
    AgentSetup,
    ApprovalMode,
    Attempts,
    Judging,
    Limits,
    Policy,
    protocol_for,
    verification_for,
)
from cli_agent.config import keep_rule
from cli_agent.contracts import dataclass
from cli_agent.facts import workspace_for
from cli_agent.fs import refuse_broad
from cli_agent.history import Journal
from cli_agent.hooks import Hooks
from cli_agent.instructions import load_skills
from cli_agent.prompt import Planner, briefer
from cli_agent.providers import default_to_local
from cli_agent.session.hook_sandbox import hook_box
from cli_agent.session.subtask import Subtasks
from cli_agent.tools import Dispatcher, Registry, SeenFiles, ToolContext, WebSetup, command_setup

if TYPE_CHECKING:
    from cli_agent.agent import CandidateRun
    from cli_agent.config import Settings
    from cli_agent.fs import Workspace
    from cli_agent.history import Journal
    from cli_agent.hooks import Hooks
    from cli_agent.mcp import McpAttachment
    from cli_agent.providers import Provider
    from cli_agent.tools import CommandSetup, Dispatcher, Registry

__all__ = ["assemble", "journal_for", "policy_for"]


@dataclass
class Parts:
    """What a session stands on before a model is attached: the settings (the bundled model filled in when none is
    configured), the workspace (each write journaled first when there is a journal), the built-in tools (without
    run_command when commands can't run here), how commands run, and one-line notes for the user."""

    settings: Settings
    workspace: Workspace
    registry: Registry
    commands: CommandSetup | None = None
    journal: Journal | None = None
    notes: list[str] = field(default_factory=list)

    def dispatcher(self, *, allowed: list[str] | None = None, track_reads: bool | None = None) -> Dispatcher:
        """The dispatcher of these tools over this workspace (see `dispatcher_for`)."""
        return dispatcher_for(self.settings, self.workspace, self.registry, commands=self.commands, allowed=allowed,
                              track_reads=track_reads)


def assemble(settings: Settings, *, journal: bool = False, commands: bool = True, writes: bool = True) -> Parts:
    """The parts every front end's session is built from. `journal`: every change is recorded in the undo journal
    first (a recorded session, `mcp serve`); `commands`: run_command is set up (in the sandbox), else it is not
    offered; `writes`: the tools may change the workspace, so a broad folder (the root, HOME) is refused."""
    if writes:
        refuse_broad(settings.workspace)
    notes = []
    if not settings.model:  # no model, server or key: the bundled model (a named model never needs its module)

        settings, local_note = default_to_local(settings)
        notes.extend([local_note] if local_note else [])
    undo = journal_for(settings.workspace) if journal else None
    # config locks + facts.toml locks; the user's config file protected
    workspace = workspace_for(settings, before_write=undo.record if undo is not None else None)
    registry = Registry.builtin()
    setup = None
    if commands:
        setup, command_notes = command_set(settings, workspace)
        notes.extend(command_notes)
    if setup is None:  # no way to run a command: run_command is not offered
        registry = registry.without({"run_command"})
    if not load_skills(workspace.root):  # no skill anywhere: skill is not offered
        registry = registry.without({"skill"})
    return Parts(settings, workspace, registry, setup, undo, notes)


def journal_for(workspace: str | Path) -> Journal:
    """The undo journal of `workspace` (the one the sessions there record their changes in)."""
    return Journal(workspace)


def policy_for(settings: Settings, *, interactive: bool) -> Policy:
    """The approval policy of the settings; `interactive`: someone can be asked."""
    return Policy(mode=mode_of(settings), interactive=interactive, yes=settings.yes,
                  ask_commands=settings.commands == "ask", unsandboxed=settings.sandbox.mode == "off",
                  rules=tuple(settings.permissions))


def mode_of(settings: Settings) -> ApprovalMode:
    """The approval mode: `mode` when set (`default` is `ask`), else `approval`."""
    if settings.mode is None:
        return ApprovalMode(settings.approval)
    return ApprovalMode("ask" if settings.mode == "default" else settings.mode)


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
    commands, seen = dispatcher.ctx.commands, dispatcher.ctx.seen
    verifier, unverified = verification_for(settings, commands, workspace.root)
    setup = AgentSetup(provider=provider, protocol=protocol_for(protocol), dispatcher=dispatcher,
                       planner=Planner(settings, dispatcher.registry, workspace, protocol),
                       policy=policy_for(settings, interactive=interactive), limits=limits_for(settings),
                       model=settings.model or "", workspace=str(workspace.root),
                       brief=briefer(workspace, seen, files=settings.task_files, repo_map=settings.repo_map)
                       if settings.task_files or settings.repo_map else None,
                       hooks=hooks_for(settings, workspace, commands),
                       keep_rule=functools.partial(keep_rule, workspace.root) if interactive else None)
    judging = Judging(verifier=verifier, unverified=unverified, require_verified=settings.verify == "required",
                      attempts=Attempts(settings.attempts, candidate, workspace.root,
                                        rewrite_first=settings.rewrite_first)
                      if verifier and verifier.command and candidate is not None and settings.attempts > 1 else None,
                      task_files=settings.task_files)
    final = replace(setup, **overrides)
    if final.subtasks is None and "task" in dispatcher.allowed:  # the task tool's helpers share this very set-up

        final.subtasks = Subtasks(settings, final, judging)
    return Agent(final, judging)


def hooks_for(settings: Settings, workspace: Workspace, commands: CommandSetup | None = None) -> Hooks | None:
    """The hooks of the settings (`[[hooks]]`: the user config's, and a trusted project's, which run in the command
    sandbox of `commands`), or None."""
    if not settings.hooks:
        return None
    box = hook_box(commands, workspace) if any(h.sandboxed for h in settings.hooks) else None
    return Hooks(settings.hooks, workspace.root, box)


def command_set(settings: Settings, workspace: Workspace) -> tuple[CommandSetup | None, list[str]]:
    """The session's command set-up and its notes for the user: commands off or unconfined, the network allowed,
    locks not bound."""
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
    from cli_agent.mcp import McpAttachment  # deferred: the MCP client (asyncio, the SDK), only with servers

    attached = McpAttachment(settings.mcp_servers, registry)
    attached.start()
    return attached

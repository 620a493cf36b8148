"""A session: the settings turned into a workspace, a registry, a provider, an agent and a trace.

Every front end (one-shot, REPL, workflows, eval) opens a `Session` and drives its runs through `drive`, which
feeds each event to the trace and to the front end, and turns a Ctrl-C or SIGTERM that lands in the front end into
a properly finished run. The provider comes from an injectable factory, so tests plug the scripted provider in
without patching anything.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent import errors
from cli_agent.approval import ApprovalMode, Policy
from cli_agent.events import Event, RunFinished, StopReason
from cli_agent.loop import Agent, AgentSetup, Approver, Limits, Plan
from cli_agent.trace import TraceWriter, default_trace_path

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.providers.base import Provider
    from cli_agent.registry import Registry
    from cli_agent.sandbox import Workspace

__all__ = [
    "ProviderFactory",
    "Session",
    "default_provider_factory",
    "drive",
    "error_for",
    "is_interactive",
    "open_session",
]

ProviderFactory = Callable[["Settings"], "Provider"]
LISTING_LIMIT = 200  # workspace files named in the system prompt
AGENTS_MD_LIMIT = 16_000  # characters of AGENTS.md in the system prompt


def is_interactive() -> bool:
    """Someone can be asked: stdin and stdout are terminals and CI is not set."""
    return sys.stdin.isatty() and sys.stdout.isatty() and not os.environ.get("CI")


def default_provider_factory(settings: Settings) -> Provider:
    from cli_agent.providers import make_provider

    if not settings.model:
        raise errors.UsageError("no model configured: pass --model (e.g. openai/gpt-4o-mini, or scripted:FILE.json), "
                                "set CLI_AGENT_MODEL, or set model in config.toml")
    key = settings.api_key.get_secret_value() if settings.api_key else None
    return make_provider(settings.model, api_base=settings.api_base, api_key=key)


def error_for(finished: RunFinished) -> errors.CliAgentError | None:
    """The error a finished run ends the process with (None for success)."""
    table: dict[StopReason, type[errors.CliAgentError]] = {
        StopReason.ERROR: errors.ProviderError, StopReason.USAGE: errors.UsageError,
        StopReason.DENIED: errors.DeniedError, StopReason.STEP_LIMIT: errors.StepLimitError,
        StopReason.TIMEOUT: errors.RunTimeoutError, StopReason.UNUSABLE: errors.UnusableOutputError,
        StopReason.INTERRUPTED: errors.Interrupted, StopReason.TERMINATED: errors.Terminated,
    }
    cls = table.get(finished.stop_reason)
    return cls(finished.message) if cls else None


@dataclass
class Session:
    settings: Settings
    workspace: Workspace
    registry: Registry
    provider: Provider
    agent: Agent
    trace_path: Path
    trace: TraceWriter
    protocol: str
    interactive: bool
    notes: list[str] = field(default_factory=list)  # one-line facts about the set-up to show the user

    def run(self, prompt: str, approve: Approver, *, only_tools: Collection[str] | None = None) -> Iterator[Event]:
        return self.agent.run(prompt, approve, only_tools=only_tools)

    def close(self) -> None:
        try:
            self.provider.close()
        finally:
            self.trace.close()


def drive(events: Iterator[Event], *sinks: Callable[[Event], None]) -> RunFinished:
    """Feed every event to every sink; a Ctrl-C or SIGTERM raised inside a sink is thrown into the run, which
    finishes it cleanly. Returns the run's RunFinished."""
    finished: RunFinished | None = None
    pending: BaseException | None = None
    while True:
        try:
            event = events.throw(pending) if pending is not None else next(events)
        except StopIteration:
            break
        pending = None
        try:
            for sink in sinks:
                sink(event)
        except (KeyboardInterrupt, errors.TerminateSignal) as exc:
            if isinstance(event, RunFinished):
                raise
            pending = exc
        if isinstance(event, RunFinished):
            finished = event
    if finished is None:  # the loop always ends with RunFinished; this is a bug guard, not a path
        raise errors.CliAgentError("internal error: the run ended without a result")
    return finished


def open_session(settings: Settings, *, interactive: bool,
                 provider_factory: ProviderFactory = default_provider_factory) -> Session:
    from cli_agent.dispatch import Dispatcher
    from cli_agent.protocols import protocol_for
    from cli_agent.registry import Registry
    from cli_agent.sandbox import Workspace
    from cli_agent.tools import ToolContext

    root = Path(settings.workspace)
    if not root.is_dir():
        raise errors.UsageError(f"workspace is not a folder: {root}")
    workspace = Workspace(root, locks=tuple(settings.locks))
    registry = Registry.builtin()
    provider = provider_factory(settings)
    protocol = _protocol_name(settings, provider)
    dispatcher = Dispatcher(registry, ToolContext(workspace))
    policy = Policy(mode=ApprovalMode(settings.approval), interactive=interactive, yes=settings.yes)
    limits = Limits(max_steps=settings.max_steps, timeout_s=settings.timeout,
                    max_tokens_total=settings.max_tokens_total, max_cost_usd=settings.max_cost_usd,
                    max_retries=settings.max_retries, retry_base_delay=settings.retry_base_delay,
                    tool_result_max_chars=settings.tool_result_max_chars, context_window=settings.context_window)
    planner = Planner(settings, registry, workspace, protocol)
    agent = Agent(AgentSetup(provider=provider, protocol=protocol_for(protocol), dispatcher=dispatcher,
                             planner=planner, policy=policy, limits=limits, model=settings.model or "",
                             workspace=str(workspace.root)))
    trace_path = Path(settings.trace).expanduser() if settings.trace else default_trace_path()
    try:
        trace = TraceWriter(trace_path, {"workspace": str(workspace.root), "model": settings.model,
                                         "protocol": protocol})
    except OSError as exc:
        provider.close()
        raise errors.UsageError(f"cannot write the trace {trace_path}: {exc.strerror or exc}") from exc
    return Session(settings, workspace, registry, provider, agent, trace_path, trace, protocol, interactive)


def _protocol_name(settings: Settings, provider: Provider) -> str:
    if settings.no_tools:
        return "plain"
    if settings.protocol != "auto":
        return settings.protocol
    return "native" if provider.supports_native_tools() else "json"


class Planner:
    """Builds the prompt plan of a run: system prompt, tool schemas and options, with its fingerprint."""

    def __init__(self, settings: Settings, registry: Registry, workspace: Workspace, protocol: str) -> None:
        self.settings = settings
        self.registry = registry
        self.workspace = workspace
        self.protocol = protocol
        self._builder = None  # one PromptBuilder, and so one render cache, per session

    def __call__(self, task: str, only_tools: Collection[str] | None) -> Plan:
        from cli_agent.prompting import plan_fingerprint

        options = self.options()
        if self.protocol == "plain":
            system = self.settings.system_prompt
            return Plan(system, None, options, plan_fingerprint(system or "", None, options))
        built = self.build(task, only_tools)
        schemas = tuple(built.schemas) if self.protocol == "native" else None
        return Plan(built.system, schemas, options, plan_fingerprint(built.system, list(schemas or ()), options))

    def options(self) -> dict[str, object]:
        options: dict[str, object] = {"model": self.settings.model or "", "protocol": self.protocol}
        if self.settings.temperature is not None:
            options["temperature"] = self.settings.temperature
        if self.protocol == "native":
            options["tool_choice"] = "auto"
        return options

    def build(self, task: str, only_tools: Collection[str] | None):  # type: ignore[no-untyped-def]
        from cli_agent.prompting import PromptBuilder, PromptContext

        files = self.workspace.walk(".", limit=LISTING_LIMIT + 1)
        context = PromptContext(
            protocol="json" if self.protocol == "json" else "native", detail=self.settings.detail, task=task,
            workflow=None, files=tuple(files[:LISTING_LIMIT]), files_truncated=max(0, len(files) - LISTING_LIMIT),
            agents_md=self._agents_md(), facts=(), only_tools=tuple(only_tools) if only_tools is not None else None,
            workspace_name=self.workspace.root.name)
        if self._builder is None:
            self._builder = PromptBuilder(self.registry)
        return self._builder.build(context)

    def _agents_md(self) -> str | None:
        try:
            if not self.workspace.exists("AGENTS.md"):
                return None
            return self.workspace.read_bytes("AGENTS.md", limit=AGENTS_MD_LIMIT).decode("utf-8", errors="replace")
        except Exception:  # an unreadable AGENTS.md leaves the prompt without it, nothing more
            return None


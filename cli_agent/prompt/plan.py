"""The prompt plan of a session's runs: which wire protocol it speaks, and each run's system prompt, tool schemas
and request options, fingerprinted."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cli_agent.contracts import dataclass
from cli_agent.facts import FactStore
from cli_agent.instructions import Instructions, load_skills, read_instructions
from cli_agent.prompt.builder import PromptBuilder, PromptContext, json_protocol_schema, plan_fingerprint
from cli_agent.prompt.project_tests import detect_test_command
from cli_agent.providers import preferences_for

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.fs import Workspace
    from cli_agent.prompt.builder import BuiltPrompt
    from cli_agent.providers import Preferences
    from cli_agent.tools import Registry

__all__ = ["Plan", "Planner", "planned_protocol"]

LISTING_LIMIT = 200  # workspace files named in the system prompt


@dataclass(frozen=True)
class Plan:
    """What one model request carries besides the conversation: its prompt plan."""

    system: str | None
    schemas: tuple[dict[str, Any], ...] | None
    options: dict[str, Any]  # model, protocol, temperature, tool_choice, ...: all fingerprinted
    fingerprint: str

    @property
    def request_options(self) -> dict[str, Any]:
        """The options sent with the request (the model and protocol are the provider's and the loop's own)."""
        return {k: v for k, v in self.options.items() if k not in ("model", "protocol")}



def preferences(settings: Settings) -> Preferences:
    """What the provider of the settings' model asks of a session (`providers.base.Preferences`)."""
    return preferences_for(settings.model or "", settings.api_base)


def planned_protocol(settings: Settings, supports_native_tools: Callable[[], bool]) -> str:
    """The wire protocol of a session, the one resolver every front end uses (a fresh session, `/model`, `cli-agent
    prompt`): plain chat for `no_tools`, else the protocol the provider needs, else the settings', else native when
    the provider calls tools natively. `supports_native_tools` is asked only when `auto` needs it, so `cli-agent
    prompt` resolves it the way a run does without starting a model it may not need."""
    if settings.no_tools:
        return "plain"
    needed = preferences(settings).protocol
    if needed is not None:
        return needed
    if settings.protocol != "auto":
        return settings.protocol
    return "native" if supports_native_tools() else "json"


class Planner:
    """Builds the prompt plan of a run: system prompt, tool schemas and options, with its fingerprint."""

    def __init__(self, settings: Settings, registry: Registry, workspace: Workspace, protocol: str) -> None:
        self.settings = settings
        self.registry = registry
        self.workspace = workspace
        self.protocol = protocol
        self._builder: PromptBuilder | None = None  # one PromptBuilder, and so one render cache, per session

    def __call__(self, task: str, only_tools: Collection[str] | None) -> Plan:
        return self.plan(task, only_tools)[0]

    def use_registry(self, registry: Registry) -> None:
        """Build the next prompts from `registry` (the built-ins grown by MCP tools)."""
        self.registry = registry
        self._builder = None

    def switch_model(self, settings: Settings, protocol: str) -> None:
        """Plan the next runs for another model (`/model`): its settings and the protocol it speaks."""
        self.settings, self.protocol = settings, protocol

    def plan(self, task: str, only_tools: Collection[str] | None) -> tuple[Plan, BuiltPrompt | None]:
        """The plan, and the prompt it was built from (None for plain chat)."""
        options = self.options()
        if self.protocol == "plain":
            system = self.settings.system_prompt
            return Plan(system, None, options, plan_fingerprint(system or "", None, options)), None
        built = self.build(task, only_tools)
        system = built.system
        wants = preferences(self.settings)
        if self.protocol == "json" and wants.constrained_json:  # the schema, and the words on how to answer with it

            options["response_format"] = {"type": "json_object", "schema": json_protocol_schema(built.tools)}
            system += wants.constrained_answer
        schemas = tuple(built.schemas) if self.protocol == "native" else None
        return Plan(system, schemas, options, plan_fingerprint(system, list(schemas or ()), options)), built

    def options(self) -> dict[str, object]:
        options: dict[str, object] = {"model": self.settings.model or "", "protocol": self.protocol}
        options |= preferences(self.settings).options
        if self.settings.temperature is not None:
            options["temperature"] = self.settings.temperature
        if self.protocol == "native":
            options["tool_choice"] = "auto"
        return options

    def build(self, task: str, only_tools: Collection[str] | None) -> BuiltPrompt:
        files = self.workspace.walk(".", limit=LISTING_LIMIT + 1)
        found = self.instructions()
        context = PromptContext(
            protocol="json" if self.protocol == "json" else "native", task=task,
            detail=preferences(self.settings).detail or self.settings.detail,
            workflow=None, files=tuple(files[:LISTING_LIMIT]), files_truncated=max(0, len(files) - LISTING_LIMIT),
            instructions=found.parts, instructions_note=found.note, skills=self._skills(), facts=self._facts(),
            only_tools=tuple(only_tools) if only_tools is not None else None,
            workspace_name=self.workspace.root.name, test_command=self._test_command())
        if self._builder is None:
            self._builder = PromptBuilder(self.registry)
        return self._builder.build(context)

    def _test_command(self) -> str | None:
        return self.settings.test_command or detect_test_command(self.workspace.root)

    def _facts(self) -> tuple[str, ...]:
        """The committed project facts, never the pending proposals; read once per run (the planner is called once
        a run). A broken facts.toml raises ConfigError, which ends the run with exit 2."""
        return tuple(" ".join(f.text.split()) for f in FactStore(self.workspace.root).committed())

    def instructions(self) -> Instructions:
        """The instruction files from the workspace root down to the folder the user works in (the current one)."""
        return read_instructions(self.workspace, Path.cwd())

    def _skills(self) -> tuple[tuple[str, str], ...]:
        if "skill" not in self.registry:
            return ()
        return tuple((s.name, s.description + ("" if s.trusted else " (from an untrusted folder)"))
                     for s in load_skills(self.workspace.root).skills.values())

"""Builds a real Agent over a temporary workspace with the scripted provider (no patching)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cli_agent.agent.approval import ApprovalMode, Policy
from cli_agent.agent.loop import Agent, AgentSetup, Limits
from cli_agent.agent.wire import protocol_for
from cli_agent.config.settings import Settings
from cli_agent.contracts.events import ApprovalAsked, Decision, Event, RunFinished
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.plan import Planner
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import drive
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.handlers import ToolContext
from cli_agent.tools.handlers.seen import SeenFiles
from cli_agent.tools.registry import Registry


class Answers:
    """An approver that replays fixed answers and records what it was asked."""

    def __init__(self, *answers: Decision) -> None:
        self.answers = list(answers)
        self.asked: list[ApprovalAsked] = []

    def __call__(self, asked: ApprovalAsked) -> Decision:
        self.asked.append(asked)
        return self.answers.pop(0) if self.answers else Decision.NO


def make_agent(root: Path, replies: list[dict[str, Any]], *, protocol: str = "native", interactive: bool = False,
               yes: bool = False, mode: str = "ask", sleep: Any = None, clock: Any = None,
               provider: Any = None, read_first: bool = False, brief: Any = None,
               **limits: Any) -> tuple[Agent, ScriptedProvider]:
    """`read_first`: edits need the file read in the conversation, as in a real session (off by default so a
    scripted edit needs no read_file step first). `brief(seen)`: the task's brief, made from the files read."""
    provider = provider or ScriptedProvider(replies, native_tools=protocol == "native")
    workspace = Workspace(root)
    seen = SeenFiles() if read_first else None
    registry = Registry.builtin()
    settings = Settings(model="scripted", workspace=str(root), protocol=protocol if protocol != "plain" else "auto")
    setup = AgentSetup(provider=provider, protocol=protocol_for(protocol),
                       dispatcher=Dispatcher(registry, ToolContext(workspace, seen=seen)),
                       planner=Planner(settings, registry, workspace, protocol),
                       policy=Policy(mode=ApprovalMode(mode), interactive=interactive, yes=yes),
                       limits=Limits(**({"retry_base_delay": 0.0} | limits)), model="scripted",
                       workspace=str(root), brief=brief(workspace, seen) if brief is not None else None)
    if sleep is not None:
        setup.sleep = sleep
    if clock is not None:
        setup.clock = clock
    return Agent(setup), provider


def run(agent: Agent, prompt: str, approve: Any = None) -> tuple[list[Event], RunFinished]:
    events: list[Event] = []
    finished = drive(agent.run(prompt, approve or Answers()), events.append)
    return events, finished


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}

"""Builds a real Agent over a temporary workspace with the scripted provider (no patching)."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from cli_agent.agent.loop import Agent
from cli_agent.agent.run_state import Limits
from cli_agent.config.settings import Settings
from cli_agent.contracts.events import ApprovalAsked, Decision, Event, RunFinished
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.builder import agent_for, dispatcher_for
from cli_agent.session.session import drive
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
               yes: bool = False, mode: Literal["ask", "edits", "all"] = "ask", sleep: Any = None, clock: Any = None,
               provider: Any = None, read_first: bool = False, brief: Any = None,
               **limits: Any) -> tuple[Agent, ScriptedProvider]:
    """An agent built as a session builds it (`cli_agent.session.builder`), over a plain workspace with all the
    built-in tools. `read_first`: edits need the file read in the conversation, as in a real session (off by
    default so a scripted edit needs no read_file step first). `brief(workspace, seen)`: the task's brief."""
    provider = provider or ScriptedProvider(replies, native_tools=protocol == "native")
    workspace = Workspace(root)
    wire: Any = protocol if protocol != "plain" else "auto"  # "native", "json" or "auto": Settings checks it
    settings = Settings(model="scripted", workspace=str(root), protocol=wire, approval=mode, yes=yes,
                        read_before_edit=read_first, task_files=False, repo_map=False)
    dispatcher = dispatcher_for(settings, workspace, Registry.builtin())
    overrides: dict[str, Any] = {"limits": Limits(**({"retry_base_delay": 0.0} | limits))}
    overrides |= {"sleep": sleep} if sleep is not None else {}
    overrides |= {"clock": clock} if clock is not None else {}
    overrides |= {"brief": brief(workspace, dispatcher.ctx.seen)} if brief is not None else {}
    return agent_for(settings, workspace, provider, protocol, dispatcher, interactive=interactive,
                     **overrides), provider


def run(agent: Agent, prompt: str, approve: Any = None) -> tuple[list[Event], RunFinished]:
    events: list[Event] = []
    finished = drive(agent.run(prompt, approve or Answers()), events.append)
    return events, finished


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}

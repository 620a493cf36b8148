"""What a system prompt is rendered from: the protocol, the level of detail, the task and what the workspace shows.

    PromptContext(protocol="json", detail="compact", files=("app.py",), test_command="pytest -q")

A frozen value: the prompt builder memoises renders by it, so two equal contexts render once.
"""

from __future__ import annotations

from typing import Literal

from cli_agent.contracts import dataclass


@dataclass(frozen=True)
class PromptContext:
    protocol: Literal["native", "json"] = "native"
    detail: Literal["full", "compact"] = "full"
    task: str = ""
    workflow: str | None = None
    files: tuple[str, ...] = ()
    files_truncated: int = 0
    agents_md: str | None = None  # the root's AGENTS.md alone (`instructions` holds every file read)
    instructions: tuple[tuple[str, str], ...] = ()  # (path, text): AGENTS.md (or CLAUDE.md, GEMINI.md), root first
    instructions_note: str = ""  # what the bound on the instructions cut or left out
    skills: tuple[tuple[str, str], ...] = ()  # (name, description) of each skill, as the user's folders hold them
    facts: tuple[str, ...] = ()
    only_tools: tuple[str, ...] | None = None
    workspace_name: str = "workspace"
    test_command: str | None = None  # with run_command offered, the model is asked to run it before answering

    def __post_init__(self) -> None:
        if self.protocol not in ("native", "json"):
            raise ValueError(f"protocol must be 'native' or 'json', not {self.protocol!r}")
        if self.detail not in ("full", "compact"):
            raise ValueError(f"detail must be 'full' or 'compact', not {self.detail!r}")

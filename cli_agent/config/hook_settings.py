"""The `[[hooks]]` config tables: the user's own commands run on the agent's events (`cli_agent.hooks` runs them);
and the `[agents.NAME]` tables, the kinds of helper the task tool may run (`AgentType`).

    [[hooks]]
    event = "after_tool"            # before_tool | after_tool | stop | prompt
    match = "edit_file|write_file"  # a regular expression the tool name must match whole (tool events; "*" or
                                    # none: every tool)
    command = "ruff format --quiet ."
    timeout_s = 30                  # default 60

Hooks from several config files add up, user config first. A hook is a command that runs, so a project's config
brings hooks only in a trusted folder; elsewhere they are named once, in a note, and not run.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from cli_agent.contracts import dataclass
from cli_agent.validated import rule

__all__ = ["Hook"]

HookEvent = Literal["before_tool", "after_tool", "stop", "prompt"]


def check_match(value: Any) -> Any:
    """A `match` pattern, compiled once to prove it is a valid regular expression."""
    if value is not None and value != "*":
        try:
            re.compile(value)
        except (re.error, TypeError) as exc:
            raise ValueError(f"match is not a valid regular expression: {exc}") from None
    return value


@dataclass(frozen=True, kw_only=True)
class Hook:
    event: HookEvent
    command: str = rule(min_length=1, max_length=4096)
    match: str | None = rule(None, max_length=500, after=check_match)
    timeout_s: float = rule(60.0, gt=0, le=3600)
    sandboxed: bool = False  # run in the command sandbox: always for a project's hooks (set when it is loaded)

    def matches(self, tool: str) -> bool:
        """Whether this hook runs for a call of `tool` (events without a tool always match)."""
        if self.match in (None, "", "*") or not tool:
            return True
        return re.fullmatch(self.match, tool) is not None


def hook_note(path: str, hooks: list[Any]) -> str:
    """The one line that names the hooks an untrusted project config brought and says they will not run."""
    named = "; ".join(f"{getattr(h, 'event', '?')}: {getattr(h, 'command', '?')!r}" for h in hooks[:5])
    more = f" and {len(hooks) - 5} more" if len(hooks) > 5 else ""
    return (f"not running the {len(hooks)} hook(s) of the untrusted project config {path} ({named}{more}): run "
            f"`cli-agent trust` in this folder, or pass --trust, to run them")


@dataclass(frozen=True, kw_only=True)
class AgentType:
    """An `[agents.NAME]` table: a kind of helper the task tool may run (`task(..., agent="NAME")`).

        [agents.fixer]
        description = "Makes small, local fixes"
        tools = ["read_file", "search", "list_files", "edit_file"]   # its changes are still asked for
        instructions = "Change as little as you can."
    """

    description: str = rule("", max_length=500)
    tools: list[str] = rule(factory=list)
    instructions: str = rule("", max_length=20000)

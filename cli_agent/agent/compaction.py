"""Starting the conversation again: `/clear` (from nothing) and `/compact` (from the model's summary of it).

Both are recorded in the trace as a `ConversationReset` event, between runs, so a resumed session gets only what
was live after the last one, and a replay resets its conversation at the same place. `apply_reset` is the one
place that turns the event into the agent's history (the conversation it leaves: `contracts.messages.reset_messages`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from cli_agent.contracts import ConversationReset, Event, PlanUpdated, RunStarted, Verification, reset_messages

if TYPE_CHECKING:
    from cli_agent.agent.loop import Agent

__all__ = ["apply_reset", "carried_over", "compact_prompt"]

RECENT_PROMPTS = 3  # the user's last prompts carried over whole (and the first, the task, always)
PROMPT_CHARS = 8000  # the most of one prompt carried whole
OLDER_CHARS = 300  # the most of an older prompt carried
OLDER_PROMPTS = 30  # older prompts carried (bounded); more are counted
_FAILED = re.compile(r"(?:FAILED|FAIL:|ERROR)\s+(\S+)")


def compact_prompt(focus: str = "") -> str:
    """What the model is asked for: a summary that can stand for the whole conversation."""
    prompt = ("Summarise our conversation so far so that it can replace it: the task and the user's requests, "
              "what was decided, which files were read or changed and how, what is still open, and anything the "
              "user asked to remember. Be concrete (paths, names, numbers); at most about 400 words. Answer with "
              "the summary only, without calling any tool.")
    return prompt + (f" Pay most attention to: {focus.strip()}" if focus.strip() else "")


def carried_over(events: Iterable[Event], changed: Sequence[tuple[int, Sequence[str]]] = (),
                 facts: Sequence[str] = ()) -> str:
    """What a compaction keeps word for word, from the session's events so far: the user's prompts (the first and
    the last ones whole, the others bounded), the current plan, the files changed with their undo turns
    (`changed`: (turn, paths)), the last verification verdict and the failing tests it named, the facts in force."""
    prompts: list[str] = []
    plan: PlanUpdated | None = None
    verdict: Verification | None = None
    for event in events:
        if isinstance(event, RunStarted):
            prompts.append(event.command or event.prompt)
        elif isinstance(event, PlanUpdated):
            plan = event
        elif isinstance(event, Verification) and event.phase != "running":
            verdict = event
    parts = ["[Carried over word for word from the conversation so far]", _prompts(prompts)]
    if plan is not None and plan.steps:
        parts.append("The current plan:\n" + "\n".join(f"- [{s.get('status', '')}] {s.get('step', '')}"
                                                       for s in plan.steps))
    if changed:
        parts.append("Files changed so far (undo turn: files):\n"
                     + "\n".join(f"- turn {turn}: {', '.join(paths)}" for turn, paths in changed))
    if verdict is not None:
        failing = sorted(set(_FAILED.findall(verdict.summary)))
        parts.append(f"The last verification: {verdict.line}" + (f"\nFailing: {', '.join(failing)}" if failing else ""))
    if facts:
        parts.append("The project facts in force:\n" + "\n".join(f"- {fact}" for fact in facts))
    return "\n\n".join(parts)


def _prompts(prompts: list[str]) -> str:
    if not prompts:
        return "The user's prompts: (none yet)"
    lines = ["The user's prompts, oldest first:"]
    recent = set(range(max(1, len(prompts) - RECENT_PROMPTS), len(prompts))) | {0}
    older = [i for i in range(len(prompts)) if i not in recent]
    left_out = older[:max(0, len(older) - OLDER_PROMPTS)]
    for i, prompt in enumerate(prompts):
        if i in left_out:
            continue
        limit = PROMPT_CHARS if i in recent else OLDER_CHARS
        text = prompt if len(prompt) <= limit else prompt[:limit] + f" [... {len(prompt) - limit:,} more characters]"
        lines.append(f"{i + 1}. {text}")
    if left_out:
        lines.insert(2, f"(prompts 2 to {left_out[-1] + 1}: {len(left_out)} older prompts left out)")
    return "\n".join(lines)


def apply_reset(agent: Agent, reset: ConversationReset) -> None:
    """The agent's conversation after `reset`."""
    agent.clear(reset_messages(reset))

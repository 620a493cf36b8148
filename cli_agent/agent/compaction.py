"""Starting the conversation again: `/clear` (from nothing) and `/compact` (from the model's summary of it).

Both are recorded in the trace as a `ConversationReset` event, between runs, so a resumed session gets only what
was live after the last one, and a replay resets its conversation at the same place. `apply_reset` is the one
place that turns the event into the agent's history (the conversation it leaves: `contracts.messages.reset_messages`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cli_agent.contracts import ConversationReset, reset_messages

if TYPE_CHECKING:
    from cli_agent.agent.loop import Agent

__all__ = ["AUTO_COMPACT_AT", "apply_reset", "compact_prompt"]

AUTO_COMPACT_AT = 0.85  # share of the context window at which the REPL compacts before the next turn


def compact_prompt(focus: str = "") -> str:
    """What the model is asked for: a summary that can stand for the whole conversation."""
    prompt = ("Summarise our conversation so far so that it can replace it: the task and the user's requests, "
              "what was decided, which files were read or changed and how, what is still open, and anything the "
              "user asked to remember. Be concrete (paths, names, numbers); at most about 400 words. Answer with "
              "the summary only, without calling any tool.")
    return prompt + (f" Pay most attention to: {focus.strip()}" if focus.strip() else "")


def apply_reset(agent: Agent, reset: ConversationReset) -> None:
    """The agent's conversation after `reset`."""
    agent.clear(reset_messages(reset))

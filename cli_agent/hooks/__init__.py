"""Hooks: the user's own commands (`[[hooks]]` in the config, `cli_agent.config.hook_settings`) run on the agent's
events, as Claude Code's hooks are. `process` runs one command (the event as JSON on stdin, a timeout that kills
its whole process group, bounded output); `points` says what each event's outcome does to the run: a
`before_tool` hook that exits 2 blocks the call and its stderr is the reason the model gets, an `after_tool`
hook's exit 2 tells the model its stderr, a `stop` hook's exit 2 sends its stderr back and the run goes on, a
`prompt` hook's exit 2 blocks the prompt (and its stdout on exit 0 is added to it). Every hook that ran is a
`HookRan` event: the transcript shows it.

May import: config, fs, validated, contracts.
"""

from cli_agent.hooks.points import *
from cli_agent.hooks.process import *

__all__ = ["HookBox", "HookOutcome", "Hooks", "PromptBlocked", "run_hook"]

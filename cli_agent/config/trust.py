"""What a project's `.cli-agent/config.toml` may set: the one table of config keys by what they do.

A repository the user clones brings its own project config. Until the user trusts the folder, that config may only
narrow what cli-agent does (add locks, lower a limit, pick a protocol); every key that widens a permission, sends
data elsewhere, points outside the workspace or runs a command is ignored, and the run says so in one line.

Each key has one row in `KEY_RULES`:

    NARROWS      always taken from a project config (it can only make the agent do less, or change nothing
                 that matters for safety: protocol, locks, detail)
    NEEDS_TRUST  taken from a project config only in a trusted folder; with a `narrows` test, also taken when
                 the value is no wider than the one below it (a lower limit, a stricter approval mode)
    USER_ONLY    never taken from a project config, trusted or not (user config, --config, env or flags only)

A key of a table is looked up by its full name (`local.model`), then by its table (`sandbox`), so a table such as
`[mcp_servers.NAME]` needs one row. A key with no row needs trust: a new key is safe until someone classifies it.
"""

from __future__ import annotations

import enum
import os
from collections.abc import Callable, Mapping
from typing import Any

from cli_agent.config.settings import USER_ONLY_TABLES
from cli_agent.contracts import dataclass


class KeyKind(enum.Enum):
    NARROWS = "narrows"
    NEEDS_TRUST = "needs-trust"
    USER_ONLY = "user-config-only"


Narrows = Callable[[Any, Any], bool]  # (the project's value, the value below it) -> the project's is no wider


@dataclass(frozen=True)
class KeyRule:
    kind: KeyKind
    narrows: Narrows | None = None  # NEEDS_TRUST only: when an untrusted value is still taken
    why: str = ""  # what the key could do from an untrusted repository (shown by `cli-agent trust`)


def _lower(new: Any, below: Any) -> bool:
    """A limit no higher than the one below it (None is no limit)."""
    return new is not None and (below is None or new <= below)


def _fewer_threads(new: Any, below: Any) -> bool:
    """No more threads than the one below, or than the machine's cores (None there is one per core)."""
    return new is not None and new <= (below or os.cpu_count() or 1)


def _not_off(new: Any, below: Any) -> bool:
    """A safety net kept on (or turned on, or made stricter: `verify = "required"`)."""
    return new == below or new == "required" or (new is True and below != "required")


def _ranked(*order: str) -> Narrows:
    return lambda new, below: order.index(new) <= order.index(below)


def _no_allow(new: Any, below: Any) -> bool:
    """Rules that only deny or ask."""
    return all(getattr(r, "decision", "allow") != "allow" for r in new)


def _false(new: Any, below: Any) -> bool:
    return new is False


_NARROWS = KeyRule(KeyKind.NARROWS)
_LIMIT = KeyRule(KeyKind.NEEDS_TRUST, _lower, "raises a limit")

KEY_RULES: dict[str, KeyRule] = {
    # where requests go and who pays: the user's key must never go to a server the repository names
    "model": KeyRule(KeyKind.NEEDS_TRUST, why="picks the model (and so the provider the prompts go to)"),
    "api_base": KeyRule(KeyKind.NEEDS_TRUST, why="sends your prompts and API key to another server"),
    "api_key": KeyRule(KeyKind.NEEDS_TRUST, why="replaces your API key"),
    "local.model": KeyRule(KeyKind.NEEDS_TRUST, why="loads a model file from any path"),
    # permissions
    "yes": KeyRule(KeyKind.NEEDS_TRUST, _false, "approves every change"),
    "approval": KeyRule(KeyKind.NEEDS_TRUST, _ranked("ask", "edits", "all"), "approves changes without asking"),
    "trace": KeyRule(KeyKind.NEEDS_TRUST, why="writes the conversation to a path of its choosing"),
    "workspace": KeyRule(KeyKind.USER_ONLY, why="moves the agent to another folder"),
    "mcp_servers": KeyRule(KeyKind.NEEDS_TRUST, why="starts commands (MCP servers) that offer the model tools"),
    "hooks": KeyRule(KeyKind.NEEDS_TRUST, why="runs commands of its choosing on the agent's events"),
    "permissions": KeyRule(KeyKind.NEEDS_TRUST, _no_allow, "allows calls without asking ([[permissions]] allow rules)"),
    "mode": KeyRule(KeyKind.NEEDS_TRUST, lambda new, below: _ranked("plan", "default", "edits", "all")(
        new, below or "default"), "approves changes without asking"),
    "agents": KeyRule(KeyKind.NEEDS_TRUST, why="gives the task tool's helpers more tools"),
    **dict.fromkeys(("sandbox", "sandbox.mode", "sandbox.network", "sandbox.read_paths", "sandbox.write_paths",
                     "sandbox.env_allow"), KeyRule(KeyKind.USER_ONLY, why="widens what commands may read or reach")),
    **dict.fromkeys(("web", "web.allow_private"), KeyRule(KeyKind.USER_ONLY, why="lets web_fetch reach your network")),
    "commands": KeyRule(KeyKind.NEEDS_TRUST, _ranked("ask", "auto"), "runs commands without asking first"),
    "test_command": KeyRule(KeyKind.NEEDS_TRUST, why="names a command the model is told to run"),
    "verify": KeyRule(KeyKind.NEEDS_TRUST, _not_off, "skips the test run that checks the model's changes"),
    "verify_rounds": _LIMIT, "attempts": _LIMIT,
    "command_timeout": _LIMIT, "command_timeout_max": _LIMIT,
    # limits: lower is fine, higher needs trust
    "max_steps": _LIMIT, "timeout": _LIMIT, "max_tokens_total": _LIMIT, "max_cost_usd": _LIMIT,
    "max_retries": _LIMIT, "tool_result_max_chars": _LIMIT, "context_window": _LIMIT,
    "local.threads": KeyRule(KeyKind.NEEDS_TRUST, _fewer_threads, "takes more cores"), "local.context_size": _LIMIT,
    "local.keep_warm_s": _LIMIT,
    # what only shapes the conversation or the output
    "protocol": _NARROWS, "locks": _NARROWS, "no_tools": _NARROWS, "detail": _NARROWS, "output": _NARROWS,
    "temperature": _NARROWS, "retry_base_delay": _NARROWS, "system_prompt": _NARROWS,
    "task_files": _NARROWS, "repo_map": _NARROWS, "local.warm_start": _NARROWS, "local.speculative": _NARROWS,
    "rewrite_first": _NARROWS,
    # edit safety nets: turning one off widens what an edit may do
    "read_before_edit": KeyRule(KeyKind.NEEDS_TRUST, _not_off, "lets edits skip reading the file first"),
    "loose_edits": _NARROWS,
    "syntax_check": KeyRule(KeyKind.NEEDS_TRUST, _not_off, "lets edits leave Python files unparseable"),
    # what a hosted model costs
    "cache": KeyRule(KeyKind.NEEDS_TRUST, _not_off, "turns prompt caching off: every request pays the full price"),
    "reasoning_effort": KeyRule(KeyKind.NEEDS_TRUST, why="has the model spend more tokens thinking"),
}


def rule_for(key: str) -> KeyRule:
    """The key's row, else its table's row, else "needs trust"."""
    return KEY_RULES.get(key) or KEY_RULES.get(key.split(".", 1)[0]) or KeyRule(KeyKind.NEEDS_TRUST,
                                                                              why="not classified")


@dataclass(frozen=True)
class Screened:
    """A project config's keys split by what the folder's trust allows."""

    kept: tuple[str, ...]
    needs_trust: tuple[str, ...]  # ignored because the folder is not trusted
    user_only: tuple[str, ...]  # ignored in every project config


def screen_project(project: Mapping[str, Any], below: Mapping[str, Any], *, trusted: bool) -> Screened:
    """Which of the project config's keys (`project`: key -> value) count. `below`: each key's value from the layers
    under the project config (user config, defaults), for the `narrows` tests."""
    kept, needs_trust, user_only = [], [], []
    for key, value in project.items():
        rule = rule_for(key)
        if rule.kind is KeyKind.USER_ONLY:
            user_only.append(key)
        elif rule.kind is KeyKind.NARROWS or trusted or (rule.narrows is not None
                                                          and _safe(rule.narrows, value, below.get(key))):
            kept.append(key)
        else:
            needs_trust.append(key)
    return Screened(tuple(kept), tuple(needs_trust), tuple(user_only))


def _safe(narrows: Narrows, new: Any, below: Any) -> bool:
    try:
        return narrows(new, below)
    except (TypeError, ValueError):  # not comparable: not provably narrower
        return False


def trust_note(config_path: str, screened: Screened) -> str | None:
    """The one line that names the keys a project config sets that need the folder's trust, and how to trust it."""
    if not screened.needs_trust:
        return None
    return (f"ignored {', '.join(screened.needs_trust)} from the untrusted project config {config_path} "
            f"(run `cli-agent trust` in this folder, or pass --trust, to use them)")


def untrusted_note(config_path: str, screened: Screened) -> str | None:
    """The one line that says what a project config could not set, and how to let it; None when nothing was
    ignored."""
    parts = [part for part in (trust_note(config_path, screened),) if part]
    tables = [key for key in screened.user_only if key.partition(".")[0] in USER_ONLY_TABLES]  # [web], [sandbox]
    others = [key for key in screened.user_only if key not in tables]
    if others:
        parts.append(f"ignored {', '.join(others)} from the project config {config_path} (only your user config, "
                     f"--config, the environment or a flag may set them)")
    if tables:
        parts.append(f"ignored {', '.join(tables)} from the project config {config_path} (only your user config "
                     f"may set them)")
    return "; ".join(parts) or None

"""The REPL's bottom toolbar, and the approval mode Shift+Tab moves through.

The toolbar says the model, the approval mode and the tools granted for the session, the context meter (from 70 %
full; red from 90 %), tokens, cost, steps, the workspace; it is made to fit the terminal's width by shortening, then
leaving out, its least useful parts first. It never asks a provider anything (the context window comes from the
loop, which learns it at the first request), so drawing it costs no import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.home_path import short_path

if TYPE_CHECKING:
    from prompt_toolkit.formatted_text import StyleAndTextTuples

    from cli_agent.session import Session


_MODES = ("ask", "plan", "edits", "all")


def next_mode(mode: Any) -> Any:
    """The approval mode Shift+Tab moves to: default (ask) → plan → edits → all → default."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.agent import ApprovalMode

    return ApprovalMode(_MODES[(_MODES.index(str(mode.value)) + 1) % len(_MODES)])


def context_use(session: Session, measured: int | None = None) -> tuple[int, int | None]:
    """(tokens the next request carries, the context window or None until the first request): `measured`, the
    provider's count of the conversation at its last reply, when there is one; else the agent's estimate."""
    used, window = session.agent.context_use()
    return (measured if measured else used), window


def context_share(session: Session, measured: int | None = None) -> float | None:
    """How full the model's context window is (0..1), None while the window is unknown (before the first
    request; never asked of the provider here, which for a LiteLLM model would import LiteLLM)."""
    used, window = context_use(session, measured)
    return used / window if window else None


def toolbar(settings: Any, session: Session | None, steps: int, *, width: int = 80,
            measured: int | None = None) -> StyleAndTextTuples:
    """The bottom toolbar, made to fit `width` by shortening and then leaving out its least useful parts first:
    model, approval mode and the tools granted for the session, the context meter (from 70 % full), tokens (and
    those served from the prompt cache), cost, steps, workspace, the help hint. `measured`: the conversation's
    size as the provider last counted it (`context_use`)."""
    if session is None:  # still being made behind the prompt; with no model set, the one it picks is not known yet
        model = f"{esc(settings.model)} · " if settings is not None and settings.model else ""
        return [("class:bottom-toolbar", f" {model}starting… ")]
    usage = session.agent.usage
    policy = session.agent.policy
    mode = "yes (--yes)" if policy.yes else policy.mode.value
    if policy.granted_tools and not policy.yes and policy.mode.value != "all":  # under "all" a grant adds nothing
        mode += " +" + ",".join(sorted(policy.granted_tools))
    share = context_share(session, measured)
    running = _running(session)
    model = esc(session.settings.model or "no model")
    parts = {"model": model, "mode": f"approval: {mode} (⇧Tab)",
             "context": f"context {share:.0%}" if share is not None and share >= 0.7 else "",
             "tokens": f"{usage.total_tokens:,} tokens" + (f" ({usage.cached_tokens:,} cached)"
                                                           if usage.cached_tokens else ""),
             "cost": f"${usage.cost_usd:.4f}" if usage.cost_usd else "",
             "steps": f"steps {steps}", "processes": f"{running} running (/ps)" if running else "",
             "workspace": esc(short_path(str(session.workspace.root))), "help": "/help"}
    cached = f" ({_short_count(usage.cached_tokens)} cached)" if usage.cached_tokens else ""
    shorter = [("help", ""), ("workspace", ""), ("steps", ""), ("mode", f"approval: {mode}"), ("cost", ""),
               ("processes", f"{running} bg" if running else ""), ("model", model.rsplit("/", 1)[-1]),
               ("tokens", f"{_short_count(usage.total_tokens)} tok{cached}"), ("mode", mode),
               ("context", f"ctx {share:.0%}" if parts["context"] else ""),
               ("model", _clip(model.rsplit("/", 1)[-1], 14)), ("tokens", f"{_short_count(usage.total_tokens)} tok"),
               ("context", ""), ("tokens", "")]

    def line() -> str:
        return " " + " · ".join(text for text in parts.values() if text) + " "

    for name, text in shorter:
        if len(line()) <= width:
            break
        parts[name] = text
    style = "class:bottom-toolbar" + (" bg:ansired" if share is not None and share >= 0.9 else "")
    marker = _command_marker(session)
    return [*marker, (style, line()[:max(width - sum(len(part[1]) for part in marker), 1)])]


def _command_marker(session: Session) -> StyleAndTextTuples:
    """Red when commands run without the sandbox (sandbox = "off"), yellow when they may use the network."""
    box = getattr(session.settings, "sandbox", None)
    if box is not None and box.mode == "off":
        return [("bg:ansired fg:ansiwhite bold", " UNSANDBOXED ")]
    if box is not None and box.network:
        return [("bg:ansiyellow fg:ansiblack", " net ")]
    return []


def _running(session: Session) -> int:
    """How many background processes run (`run_command` with `background`)."""
    commands = getattr(session, "commands", None)
    processes = None if commands is None else commands.processes
    return 0 if processes is None else len(processes.running())


def _short_count(n: int) -> str:
    return f"{n / 1000:.1f}k" if n >= 1000 else str(n)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[:width - 1] + "…"

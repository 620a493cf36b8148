"""`/model`: show the model, pick one with the arrow keys, or switch to a named one, checked first.

A model of another provider than the one the REPL was given a server and key for (`--api-base`, `--api-key`) goes
to its own provider's API with that provider's key from the environment; the picker and the switch say where. A
switch makes the new provider and checks it (for a LiteLLM model: that LiteLLM can route the name, knows it or has
a server to send it to, and finds its key) behind a spinner, with the keyboard held so nothing typed meanwhile is
echoed (a line finished meanwhile is sent next). A bad name is refused in one line and the current model stays. The
conversation carries over when the wire protocol stays, or when it holds no tool calls; otherwise the REPL asks
before starting a new one (recorded in the trace as a `/clear`).
"""

from __future__ import annotations

import dataclasses
import os
from typing import TYPE_CHECKING, Any

from rich.text import Text

from cli_agent.contracts import errors
from cli_agent.contracts import escape_for_terminal as esc
from cli_agent.ui.repl.keys import TurnKeys
from cli_agent.ui.repl.start.onboarding import KEY_MODELS
from cli_agent.ui.repl.start.startup import warm_up

if TYPE_CHECKING:
    from cli_agent.config import Settings
    from cli_agent.providers import Provider
    from cli_agent.session import Session
    from cli_agent.ui.repl.commands.commands import CommandContext

def known_models(session: Session, env: dict[str, str] | None = None) -> list[str]:
    """The models to pick from: the current one, those used before in this workspace, one for each provider whose
    key is set, and the bundled local model when its runtime is installed."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.providers import runtime_version

    env = dict(os.environ) if env is None else env
    models = [session.settings.model or ""]
    try:
        # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
        from cli_agent.history import SessionIndex

        models += [e.model for e in SessionIndex().list(session.workspace.root, limit=50)]
    except Exception:  # an unreadable index offers fewer models, nothing more
        pass
    models += [model for key, model in KEY_MODELS if env.get(key)]
    if runtime_version() is not None:
        models.append("local")
    return [m for m in dict.fromkeys(models) if m]


def _describe(session: Session) -> str:
    return f"model: {session.settings.model or '(none)'} ({session.protocol} protocol)" + _where(session.settings)


def _provider_of(model: str | None) -> str:
    """The provider a model name routes to: its prefix (`anthropic` of `anthropic/claude-…`), else the name."""
    return (model or "").split("/", 1)[0]


def _endpoints(ctx: CommandContext) -> dict[str, tuple[str | None, Any]]:
    """Each provider's server and key as this REPL was given them (`--api-base`, `--api-key`), by provider: a model
    of that provider goes there again; any other goes to its own provider with its own key."""
    known: dict[str, tuple[str | None, Any]] = ctx.__dict__.setdefault("model_endpoints", {})
    settings = ctx.session.settings
    known.setdefault(_provider_of(settings.model), (settings.api_base, settings.api_key))
    return known


def settings_for(ctx: CommandContext, name: str) -> Settings:
    """The session's settings for the model `name`: the server and key given for its provider, none for another
    provider's (LiteLLM then sends it to that provider's own API, with that provider's key from the environment)."""
    api_base, api_key = _endpoints(ctx).get(_provider_of(name), (None, None))
    return dataclasses.replace(ctx.session.settings, model=name, api_base=api_base, api_key=api_key)


def _destination(settings: Settings) -> str:
    """Where a model's requests go, in words ("" for a model without a server or a provider key)."""
    if settings.api_base:
        return f"at {settings.api_base}"
    key = next((k for k, m in KEY_MODELS if _provider_of(m) == _provider_of(settings.model)), "")
    return f"its provider's API, with {key}" if key else ""


def _where(settings: Settings) -> str:
    destination = _destination(settings)
    return f", {destination}" if destination else ""


def _label(ctx: CommandContext, name: str) -> str:
    destination = _destination(settings_for(ctx, name))
    return f"{name}  ({destination})" if destination else name


def model_command(ctx: CommandContext, args: str) -> None:
    session = ctx.session
    if args:
        switch_model(ctx, args)
        return
    ctx.console.print(Text(esc(_describe(session))))
    choose = getattr(ctx, "choose", None)
    models = known_models(session)
    if choose is None or len(models) < 2:
        if choose is not None:
            ctx.console.print(Text("no other model to pick: /model NAME (e.g. openai/gpt-4o-mini) switches to one",
                                   style="dim"))
        return
    picked = choose("Switch to which model?", [_label(ctx, m) for m in models], None, 0)
    if picked is not None and models[picked] != session.settings.model:
        switch_model(ctx, models[picked])


def _checked_provider(ctx: CommandContext, name: str) -> tuple[Provider, str]:
    """The new model's provider, checked, and its protocol; a UsageError or ProviderError if it is unusable."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.prompt import planned_protocol

    settings = settings_for(ctx, name)
    provider = ctx.provider_factory(settings)  # type: ignore[attr-defined]
    try:
        check = getattr(provider, "check", None)
        if check is not None:
            check()
        return provider, planned_protocol(settings, provider.supports_native_tools)
    except BaseException:
        provider.close()
        raise


def switch_model(ctx: CommandContext, name: str) -> None:
    """Swap the provider in place, checked first; the session, its trace and (whenever it can) the conversation
    carry on."""
    session = ctx.session
    keys = None
    try:
        with TurnKeys.open() as keys, ctx.console.status(f"checking {esc(name)}…", spinner="dots"):
            provider, protocol = _checked_provider(ctx, name)
    except errors.CliAgentError as exc:
        ctx.console.print(Text(f"model not changed: {esc(str(exc))}", style="red"))
        return
    except KeyboardInterrupt:
        ctx.console.print(Text("model not changed (interrupted)", style="yellow"))
        return
    finally:
        ctx.keep_typed(keys)  # typed while checking: sent next, or waiting at the prompt
    agent = session.agent
    portable = all(not m.tool_calls and m.role != "tool" for m in agent.history)
    kept = protocol == session.protocol or portable
    if not kept and not _confirm_drop(ctx, name, protocol):
        provider.close()
        ctx.console.print(Text("model not changed", style="yellow"))
        return
    _swap(ctx, session, name, provider, protocol, kept)


def _confirm_drop(ctx: CommandContext, name: str, protocol: str) -> bool:
    question = (f"{name} speaks the {protocol} protocol, and this conversation's tool calls can't be sent to it. "
                "Start a new conversation? [y/N] ")
    return ctx.ask_key(question) == "y"


def _swap(ctx: CommandContext, session: Session, name: str, provider: Provider, protocol: str, kept: bool) -> None:
    old = session.provider
    settings = settings_for(ctx, name)
    session.switch_model(provider, settings, protocol, keep=kept)
    old.close()
    ctx.console.print(Text(f"model: {esc(name)} ({protocol} protocol){esc(_where(settings))}; " + (
        "the conversation carries over" if kept else "a new conversation (the protocol changed)")))
    warm_up(provider)

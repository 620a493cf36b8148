"""Which model the REPL starts with when the command line names none: the model of the session `-c` continues
(and its server, never its key), or the one onboarding offers when nothing is configured. Each returns a `load`
that loads the settings again every time (trusting the folder in between may change them)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from cli_agent.contracts import errors
from cli_agent.ui.repl.answer import ask_key
from cli_agent.ui.repl.start.onboarding import choose_model

if TYPE_CHECKING:
    from cli_agent.config import Loaded
    from cli_agent.ui.repl.answer import Typed


def with_its_model(load: Callable[[], Loaded], resume: str) -> Callable[[], Loaded]:
    """The settings (loaded now) with the model and server of the session to continue, when neither the command line
    nor the environment names a model: `-c` goes on with the model it was talking to. Its key is never kept; the
    provider finds it as it would for a new session. A session that cannot be found is left to the start-up, which
    says why."""
    # deferred: the agent's stack loads behind the REPL's first prompt (Startup)
    from cli_agent.history import load_resumable

    loaded = load()
    try:
        entry, trace = load_resumable(loaded.settings.workspace, resume)
    except errors.CliAgentError:
        return load
    if not entry.model:
        return load
    recorded = "api_base" in trace.header  # not in a trace older than the field: then the config's
    if str(trace.header.get("model") or "").split("/", 1)[0] != entry.model.split("/", 1)[0]:
        recorded = False  # switched (/model) to another provider's model: not the first model's server

    def with_model() -> Loaded:  # loaded again each time: trusting the folder may change the settings
        now = load()
        api_base = trace.header["api_base"] if recorded else now.settings.api_base
        note = f"continuing with the session's model {entry.model}" + (f" at {api_base}" if api_base else "") + \
            " (--model to use another)"
        return dataclasses.replace(now, settings=dataclasses.replace(now.settings, model=entry.model,
                                                                     api_base=api_base), notes=(*now.notes, note))
    return with_model


def onboarded(load: Callable[[], Loaded], typed: Typed | None = None) -> Callable[[], Loaded]:
    """The settings, loaded now (only for a user with no model on the command line or in the environment), with the
    model onboarding chose; keys typed before its question was drawn go into `typed`, for the prompt."""
    loaded = load()
    if {"model", "api_base"} & set(loaded.withheld):  # the project config names one: the trust question decides
        return load

    model = choose_model(loaded.settings, ask=lambda question: ask_key(question, typed))
    if model is None:
        return load
    def with_model() -> Loaded:  # loaded again each time: trusting the folder may change the settings
        now = load()
        return dataclasses.replace(now, settings=dataclasses.replace(now.settings, model=model))
    return with_model

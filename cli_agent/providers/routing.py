"""From a model string to its provider: one table, `ROUTES`, read by `provider_class`, `preferences_for` and
`make_provider`. The first row that takes the model string (and the api_base) wins:

    make_provider("local", local=settings.local)           -> LocalProvider (the bundled llama.cpp model)
    make_provider("scripted:replies.json", ...)            -> ScriptedProvider (tests, eval, replay)
    make_provider("openai/MODEL", api_base=URL, ...)       -> OpenAIHTTPProvider (httpx, no LiteLLM: the fast path)
    make_provider("anthropic/claude-...", ...)             -> LiteLLMProvider (everything else)

A new provider is a row: what it takes, its class, and how it is built from what `make_provider` was given.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

from cli_agent.config import LocalSettings
from cli_agent.contracts import dataclass
from cli_agent.providers.base import Preferences, Provider
from cli_agent.providers.litellm_provider import LiteLLMProvider
from cli_agent.providers.local.provider import LOCAL_MODEL, LocalProvider
from cli_agent.providers.openai_http import HTTP_PREFIXES, OpenAIHTTPProvider
from cli_agent.providers.scripted import ScriptedProvider

__all__ = ["make_provider", "preferences_for", "provider_class"]

SCRIPTED_PREFIX = "scripted:"


@dataclass(frozen=True)
class Wanted:
    """What `make_provider` was given: the model string and what a provider may be built with."""

    model: str
    api_base: str | None
    api_key: str | None = None
    max_retries: int = 0
    local: LocalSettings | None = None
    cache: bool = True  # Anthropic's prompt-cache breakpoints (LiteLLM only)
    reasoning_effort: str | None = None  # low, medium or high, for a reasoning model (hosted providers only)


class Route(NamedTuple):
    """One row of the table: whether it takes (model, api_base), the provider class, and how it is built."""

    takes: Callable[[str, str | None], bool]
    provider: type
    build: Callable[[Wanted], Provider]


def _speaks_openai_http(model: str, api_base: str | None) -> bool:
    """A server of our own choosing (an api_base) and a model string of a prefix the HTTP transport speaks."""
    return bool(api_base) and "/" in model and model.partition("/")[0] in HTTP_PREFIXES


def _openai_http(wanted: Wanted) -> Provider:
    assert wanted.api_base  # the row takes only a model string with an api_base
    return OpenAIHTTPProvider(wanted.model, api_base=wanted.api_base, api_key=wanted.api_key,
                              max_retries=wanted.max_retries, reasoning_effort=wanted.reasoning_effort)


def _litellm(wanted: Wanted) -> Provider:
    return LiteLLMProvider(wanted.model, api_base=wanted.api_base, api_key=wanted.api_key,
                           max_retries=wanted.max_retries, reasoning_effort=wanted.reasoning_effort,
                           cache=wanted.cache)


ROUTES: tuple[Route, ...] = (
    Route(lambda model, _: model == LOCAL_MODEL, LocalProvider, lambda wanted: LocalProvider(wanted.local)),
    Route(lambda model, _: model.startswith(SCRIPTED_PREFIX), ScriptedProvider,
          lambda wanted: ScriptedProvider.from_file(Path(wanted.model.removeprefix(SCRIPTED_PREFIX)))),
    Route(_speaks_openai_http, OpenAIHTTPProvider, _openai_http),
    Route(lambda model, api_base: True, LiteLLMProvider, _litellm),  # everything else
)


def _route(model: str, api_base: str | None) -> Route:
    return next(route for route in ROUTES if route.takes(model, api_base))


def provider_class(model: str, api_base: str | None) -> type:
    """The provider class a model string routes to (the table's first row that takes it)."""
    return _route(model, api_base).provider


def preferences_for(model: str, api_base: str | None = None) -> Preferences:
    """What the provider of `model` asks of a session, known without starting it."""
    preferences = getattr(provider_class(model, api_base), "preferences", None)
    return preferences if isinstance(preferences, Preferences) else Preferences()


def make_provider(model: str, *, api_base: str | None, api_key: str | None, max_retries: int = 0,
                  local: LocalSettings | None = None, cache: bool = True,
                  reasoning_effort: str | None = None) -> Provider:
    """The provider for a model string, built as its row says. `cache`: Anthropic's prompt-cache breakpoints;
    `reasoning_effort`: low, medium or high for a reasoning model (hosted providers only)."""
    wanted = Wanted(model, api_base, api_key, max_retries, local, cache, reasoning_effort)
    return _route(model, api_base).build(wanted)

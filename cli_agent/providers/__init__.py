"""Providers: the seam between the agent loop and a model.

    make_provider("scripted:replies.json", ...)            -> ScriptedProvider (tests, eval, replay)
    make_provider("openai/MODEL", api_base=URL, ...)       -> OpenAIHTTPProvider (httpx, no LiteLLM: the fast path)
    make_provider("anthropic/claude-...", ...)             -> LiteLLMProvider (everything else)
    make_provider("local", local=settings.local)           -> LocalProvider (the bundled llama.cpp model)

Nothing heavy is imported here: httpx and LiteLLM load when a provider first sends a request.

May import: config, fs, validated, contracts.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.providers.base import Preferences, Provider, ProviderReply, ProviderRequest
from cli_agent.providers.litellm_provider import LiteLLMProvider
from cli_agent.providers.openai_http import HTTP_PREFIXES, OpenAIHTTPProvider
from cli_agent.providers.scripted import ScriptedProvider, ScriptError

if TYPE_CHECKING:
    from cli_agent.config.settings import LocalSettings

__all__ = [
    "LiteLLMProvider",
    "OpenAIHTTPProvider",
    "Preferences",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "ScriptError",
    "ScriptedProvider",
    "make_provider",
    "preferences_for",
    "provider_class",
]

SCRIPTED_PREFIX = "scripted:"
LOCAL = "local"  # the bundled model


def provider_class(model: str, api_base: str | None) -> type:
    """The provider class a model string routes to; see the module docstring."""
    if model == LOCAL:
        from cli_agent.providers.local import LocalProvider

        return LocalProvider
    if model.startswith(SCRIPTED_PREFIX):
        return ScriptedProvider
    if api_base and model.partition("/")[0] in HTTP_PREFIXES and "/" in model:
        return OpenAIHTTPProvider
    return LiteLLMProvider


def preferences_for(model: str, api_base: str | None = None) -> Preferences:
    """What the provider of `model` asks of a session, known without starting it."""
    preferences = getattr(provider_class(model, api_base), "preferences", None)
    return preferences if isinstance(preferences, Preferences) else Preferences()


def make_provider(model: str, *, api_base: str | None, api_key: str | None, max_retries: int = 0,
                  local: LocalSettings | None = None, cache: bool = True,
                  reasoning_effort: str | None = None) -> Provider:
    """The provider for a model string; see the module docstring for the routing. `cache`: Anthropic's prompt-cache
    breakpoints; `reasoning_effort`: low, medium or high for a reasoning model (hosted providers only)."""
    cls = provider_class(model, api_base)
    if model == LOCAL:
        return cls(local)  # type: ignore[no-any-return]
    if cls is ScriptedProvider:
        return ScriptedProvider.from_file(Path(model.removeprefix(SCRIPTED_PREFIX)))
    hosted: dict[str, object] = {"reasoning_effort": reasoning_effort}
    if cls is LiteLLMProvider:
        hosted["cache"] = cache
    return cls(model, api_base=api_base, api_key=api_key, max_retries=max_retries,  # type: ignore[no-any-return]
               **hosted)

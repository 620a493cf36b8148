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
    from cli_agent.providers import litellm_provider
    from cli_agent.providers.base import NoModel, Thinking
    from cli_agent.providers.local import CONSTRAINED_ANSWER, default_to_local, setup_pending
    from cli_agent.providers.local_model import model_status, resolve_model, runtime_version
    from cli_agent.providers.waiting import cancelled_by

if TYPE_CHECKING:
    from cli_agent.config import LocalSettings


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

__all__ = [
    "CONSTRAINED_ANSWER",
    "LiteLLMProvider",
    "NoModel",
    "OpenAIHTTPProvider",
    "Preferences",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "ScriptError",
    "ScriptedProvider",
    "Thinking",
    "cancelled_by",
    "default_to_local",
    "litellm_provider",
    "make_provider",
    "model_status",
    "preferences_for",
    "provider_class",
    "resolve_model",
    "runtime_version",
    "setup_pending",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("NoModel", "Thinking"):
        from cli_agent.providers import base

        return getattr(base, name)
    if name in ("CONSTRAINED_ANSWER", "default_to_local", "setup_pending"):
        from cli_agent.providers import local

        return getattr(local, name)
    if name in ("model_status", "resolve_model", "runtime_version"):
        from cli_agent.providers import local_model

        return getattr(local_model, name)
    if name in ("cancelled_by",):
        from cli_agent.providers import waiting

        return getattr(waiting, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

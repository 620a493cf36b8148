"""Providers: the seam between the agent loop and a model.

    make_provider("scripted:replies.json", ...)            -> ScriptedProvider (tests, eval, replay)
    make_provider("openai/MODEL", api_base=URL, ...)       -> OpenAIHTTPProvider (httpx, no LiteLLM: the fast path)
    make_provider("anthropic/claude-...", ...)             -> LiteLLMProvider (everything else)
    make_provider("local", local=settings.local)           -> LocalProvider (the bundled llama.cpp model)

Nothing heavy is imported here: httpx and LiteLLM load when a provider first sends a request.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.providers.base import Provider, ProviderReply, ProviderRequest
from cli_agent.providers.litellm_provider import LiteLLMProvider
from cli_agent.providers.openai_http import HTTP_PREFIXES, OpenAIHTTPProvider
from cli_agent.providers.scripted import ScriptedProvider, ScriptError

if TYPE_CHECKING:
    from cli_agent.config import LocalSettings

__all__ = [
    "LiteLLMProvider",
    "OpenAIHTTPProvider",
    "Provider",
    "ProviderReply",
    "ProviderRequest",
    "ScriptError",
    "ScriptedProvider",
    "make_provider",
]

SCRIPTED_PREFIX = "scripted:"


def make_provider(model: str, *, api_base: str | None, api_key: str | None, max_retries: int = 0,
                  local: LocalSettings | None = None) -> Provider:
    """The provider for a model string; see the module docstring for the routing."""
    if model == "local":
        from cli_agent.providers.local import LocalProvider

        return LocalProvider(local)
    if model.startswith(SCRIPTED_PREFIX):
        return ScriptedProvider.from_file(Path(model.removeprefix(SCRIPTED_PREFIX)))
    if api_base and model.partition("/")[0] in HTTP_PREFIXES and "/" in model:
        return OpenAIHTTPProvider(model, api_base=api_base, api_key=api_key, max_retries=max_retries)
    return LiteLLMProvider(model, api_base=api_base, api_key=api_key, max_retries=max_retries)


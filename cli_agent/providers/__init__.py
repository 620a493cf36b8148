"""Providers: the seam between the agent loop and a model. The seam and what every transport shares (`base`), the
one table from a model string to its provider (`routing`: `make_provider`), the providers: any OpenAI-compatible
server over plain httpx (`openai_http`), everything else through LiteLLM (`litellm_provider`), the scripted model of
tests, eval and replay (`scripted`, playing `reply_script`), the bundled offline model (`local/`); and waiting for a
reply without waiting too long (`waiting`). `loopback/` holds the fake servers of tests and benchmarks.

Nothing heavy is imported here: httpx, LiteLLM and xllamacpp load when a provider first needs them.

May import: config, fs, validated, contracts.
"""

from cli_agent.providers import litellm_provider
from cli_agent.providers.base import *
from cli_agent.providers.litellm_provider import *
from cli_agent.providers.local.kept import *
from cli_agent.providers.local.model import *
from cli_agent.providers.local.provider import *
from cli_agent.providers.local.runtime import *
from cli_agent.providers.openai_http import *
from cli_agent.providers.routing import *
from cli_agent.providers.scripted import *
from cli_agent.providers.waiting import *

__all__ = [
    "LiteLLMProvider", "NoModel", "OpenAIHTTPProvider", "Preferences", "Provider", "ProviderReply", "ProviderRequest",
    "ScriptError", "ScriptedProvider", "Thinking", "cancelled_by", "default_to_local", "litellm_provider",
    "make_provider", "model_status", "preferences_for", "provider_class", "resolve_model", "runtime_version",
    "setup_pending", "stop_kept",
]

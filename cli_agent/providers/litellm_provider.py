"""LiteLLMProvider: every model LiteLLM knows, through `litellm.completion(stream=True)`.

`import litellm` costs seconds and, unless told otherwise, fetches a price map from the internet: it happens only
in `preload()` (callable from a background thread so the REPL can warm it), never at module level. LiteLLM's
exceptions are translated here and nowhere else, through `LITELLM_RULES`.

LiteLLM also loads a `.env` file when it is imported (python-dotenv, searching upwards from its own folder, or from
the current folder under a debugger), so a repository with a venv inside it could choose where the user's key is
sent (`OPENAI_BASE_URL=...` in its `.env`). `preload` switches python-dotenv's loading off for the process before
the import (`refuse_dotenv`): the provider's base URL and key come from flags, the process environment, the user
config or a trusted project config, never from a file a library finds.
"""

from __future__ import annotations

import difflib
import os
import re
import threading
from collections.abc import Iterator, Mapping
from dataclasses import replace
from types import ModuleType
from typing import Any

from cli_agent.contracts import CliAgentError, MissingCredentialsError, ProviderError, Usage, UsageError
from cli_agent.providers.base import (
    END_OF_REPLY,
    ProviderReply,
    ProviderRequest,
    Rule,
    Thinking,
    exception_chain,
    exception_detail,
    is_local_url,
    relay,
    rule_for_exception,
    translate,
)
from cli_agent.providers.cache_marks import breakpoints, takes_breakpoints
from cli_agent.providers.openai_http import LOCAL_DUMMY_KEY, TRANSPORT_RULES, status_error

__all__ = ["LiteLLMProvider"]

# Warnings LiteLLM silences itself at import (its own pydantic noise); a strict test run has to do the same.
LITELLM_QUIETED_WARNINGS = (
    r".*conflict with protected namespace.*",
    r".*Accessing the.*attribute on the instance is deprecated.*",
    r".*`ReadOnly` qualifier.*",
)

_preload_lock = threading.Lock()

# (LiteLLM exception class name, our error, retryable, message): only what an HTTP status does not say. Subclasses
# come first in an exception's MRO, so ContextWindowExceededError wins over its base BadRequestError (400). A class
# with no row (AuthenticationError, RateLimitError, NotFoundError, ...) carries its HTTP status and goes through the
# one status table, openai_http.STATUS_RULES, like the same status from any OpenAI-compatible server.
LITELLM_RULES: tuple[Rule, ...] = (
    Rule("ContextWindowExceededError", ProviderError, False,
         "the conversation no longer fits the context window of {model}: {detail}"),
    Rule("ContentPolicyViolationError", ProviderError, False, "{where} refused the content: {detail}"),
    Rule("UnsupportedParamsError", ProviderError, False, "{model} does not take a parameter: {detail}"),
    Rule("LiteLLMUnknownProvider", ProviderError, False, "LiteLLM knows no provider for {model}: {detail}"),
    Rule("Timeout", ProviderError, True, "no answer from {where} in time: {detail}"),
    Rule("APITimeoutError", ProviderError, True, "no answer from {where} in time: {detail}"),
    Rule("APIConnectionError", ProviderError, True, "could not connect to {where}: {detail}"),
    Rule("APIResponseValidationError", ProviderError, False, "{where} sent a reply LiteLLM cannot read: {detail}"),
    Rule("BudgetExceededError", ProviderError, False, "the LiteLLM budget is exhausted: {detail}"),
)
# "litellm.RateLimitError: RateLimitError: OpenAIException - " says again what the rule already says
_LITELLM_PREFIX = re.compile(r"^(?:litellm\.\w+:\s*|\w+Error:\s*|\w+Exception - )+")
_OTHER = Rule("Exception", ProviderError, False, "{model} failed: {detail}")


def refuse_dotenv() -> None:
    """Make python-dotenv load nothing in this process, whoever calls it and whenever (LiteLLM calls
    `dotenv.load_dotenv()` at import; a later version might call it elsewhere, or bind it by name first). Reading a
    file given by name (`dotenv_values`) is left alone: it sets nothing."""
    try:  # deferred: ~9 ms, needed only just before LiteLLM loads (and it may not be installed)
        import dotenv
        import dotenv.main
    except ImportError:  # not installed: nothing can load a .env
        return

    def load_nothing(*args: Any, **kwargs: Any) -> bool:
        return False

    dotenv.load_dotenv = dotenv.main.load_dotenv = load_nothing  # type: ignore[assignment]


def preload() -> ModuleType:
    """Import LiteLLM (seconds, once) with the bundled price map, quiet debug output and no `.env` loading (see the
    module docstring); returns the module."""
    with _preload_lock:
        os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
        refuse_dotenv()
        import litellm  # deferred: seconds; only a LiteLLM model needs it

        litellm.suppress_debug_info = True
        litellm.disable_streaming_logging = True  # else every chunk is handed to a logging thread we never use
        return litellm


class LiteLLMProvider:
    """`cache`: mark Anthropic's prompt-cache breakpoints (`providers.cache_marks`) where the model takes them.
    `reasoning_effort`: low, medium or high, sent as `reasoning_effort` (LiteLLM maps it to each provider's own
    setting: Anthropic's thinking budget, OpenAI's effort) to a model LiteLLM says reasons, or does not know."""

    def __init__(self, model: str, *, api_base: str | None = None, api_key: str | None = None,
                 max_retries: int = 0, request_timeout_s: float = 600.0, cache: bool = True,
                 reasoning_effort: str | None = None) -> None:
        self.model = model
        self.cache = cache
        self.reasoning_effort = reasoning_effort
        self.api_base = api_base
        self.name = f"{model} via {api_base}" if api_base else model
        self._api_key = api_key or (LOCAL_DUMMY_KEY if is_local_url(api_base) else None)
        self._max_retries = max_retries
        self._request_timeout_s = request_timeout_s
        self._env = "the provider's API key variable"
        self._credentials_checked = False
        self._info: dict[str, Any] | None = None

    def supports_native_tools(self) -> bool:
        try:
            return bool(preload().supports_function_calling(model=self.model))
        except Exception:
            return False

    def context_window(self) -> int | None:
        info = self._model_info()
        window = info.get("max_input_tokens") or info.get("max_tokens")
        return int(window) if isinstance(window, int) and window > 0 else None

    def close(self) -> None:
        pass

    def known(self) -> bool:
        """Whether LiteLLM's price map knows the model (what it says of it is then worth believing)."""
        known = preload().model_cost
        return self.model in known or self.model.split("/", 1)[-1] in known

    def supports_images(self) -> bool:
        """False only when LiteLLM knows the model and says it has no vision (a server's own model may have it)."""
        try:
            return bool(preload().supports_vision(model=self.model)) or not self.known()
        except Exception:
            return True

    def _takes_reasoning(self) -> bool:
        try:
            return bool(preload().supports_reasoning(model=self.model)) or not self.known()
        except Exception:
            return True

    def notes(self) -> list[str]:
        """One-line facts about how the settings meet this model, for the user (a reasoning effort it ignores)."""
        if self.reasoning_effort and not self._takes_reasoning():
            return [f"{self.model} takes no reasoning effort (LiteLLM says it does not reason): "
                    f"reasoning_effort = {self.reasoning_effort!r} is not sent"]
        return []

    def _model_info(self) -> dict[str, Any]:
        if self._info is None:
            try:
                self._info = dict(preload().get_model_info(self.model))
            except Exception:
                self._info = {}
        return self._info

    def check(self) -> None:
        """Before the first request (the REPL's `/model`): a UsageError when LiteLLM cannot route the name, or does
        not know the model and no server is given to send it to; then the key, as `check_credentials`."""
        litellm = preload()
        try:
            litellm.get_llm_provider(self.model, api_base=self.api_base)
        except Exception:
            raise UsageError(f"LiteLLM cannot tell which provider serves {self.model!r}: name it provider/model, e.g. "
                             "openai/gpt-4o-mini or anthropic/claude-sonnet-4-20250514") from None
        known = litellm.model_cost
        bare = self.model.split("/", 1)[-1]
        if not self.api_base and self.model not in known and bare not in known:
            close = difflib.get_close_matches(bare, [k.split("/", 1)[-1] for k in known], n=3, cutoff=0.75)
            hint = f"; did you mean {' or '.join(dict.fromkeys(close))}?" if close else ""
            raise UsageError(f"LiteLLM does not know the model {self.model!r}{hint} (with --api-base any name "
                             "the server knows is taken)")
        self.check_credentials()

    def check_credentials(self) -> None:
        """Raise MissingCredentialsError naming the env var LiteLLM expects, before any request is sent."""
        if self._credentials_checked:
            return
        if not self._api_key:
            try:
                found = preload().validate_environment(model=self.model, api_base=self.api_base)
            except Exception:
                found = {}
            missing = list(found.get("missing_keys") or ())
            if missing:
                raise MissingCredentialsError(f"no API key for {self.model}: set {', '.join(missing)} "
                                              "or pass --api-key")
        self._credentials_checked = True

    def stream(self, request: ProviderRequest) -> Iterator[str | Thinking | ProviderReply]:
        litellm = preload()  # before the clock starts: the import is not the server's time
        self.check_credentials()
        where = self.api_base or self.model
        # Always in a worker thread: LiteLLM's timing hook calls asyncio.get_event_loop(), which on the main thread
        # of Python 3.11 creates a loop nobody closes (a ResourceWarning wherever it is collected); elsewhere
        # it runs and closes its own.
        for item in relay(lambda: self._chunks(litellm, request), timeout_s=request.timeout_s, where=where,
                          translate_error=lambda exc: self._translate(exc, where), in_thread=True):
            if isinstance(item, ProviderReply):
                item = replace(item, usage=self._priced(litellm, item.usage))
            yield item

    def _chunks(self, litellm: ModuleType, request: ProviderRequest) -> Iterator[Mapping[str, Any]]:
        seconds = self._request_timeout_s if request.timeout_s is None else min(request.timeout_s,
                                                                                self._request_timeout_s)
        kwargs: dict[str, Any] = {"timeout": seconds, "drop_params": True, "max_retries": self._max_retries,
                                  **request.chat_params()}
        if self.api_base:
            kwargs["api_base"] = self.api_base
        if self._api_key:
            kwargs["api_key"] = self._api_key
        if self.reasoning_effort and self._takes_reasoning():
            kwargs["reasoning_effort"] = self.reasoning_effort
        kwargs.update(request.options)
        claude = self._takes_breakpoints(litellm)
        if claude and "reasoning_effort" in kwargs:  # Anthropic refuses a temperature other than 1 with thinking
            kwargs.pop("temperature", None)
        messages = [m.to_openai() for m in request.messages]
        if self.cache and claude:
            messages, tools = breakpoints(messages, kwargs.get("tools"))
            if tools is not None:
                kwargs["tools"] = tools
        response = litellm.completion(model=self.model, messages=messages, **kwargs)
        if not request.stream:
            yield response.model_dump(exclude_none=True)
            yield END_OF_REPLY
            return
        for chunk in response:
            yield chunk.model_dump(exclude_none=True)

    def _translate(self, exc: Exception, where: str) -> CliAgentError:
        for cause in exception_chain(exc):  # LiteLLM reports a refused connection as a 500: the cause knows
            transport = rule_for_exception(cause, TRANSPORT_RULES, None)
            if transport is not None:
                return translate(transport, where=where, detail=exception_detail(cause))
        rule = rule_for_exception(exc, LITELLM_RULES, _OTHER)
        detail = _LITELLM_PREFIX.sub("", exception_detail(exc)) or type(exc).__name__
        status = getattr(exc, "status_code", None)
        if rule is _OTHER and isinstance(status, int) and status >= 400:
            return status_error(status, where, detail, env=self._env)
        return translate(rule, where=where, model=self.model, detail=detail, env=self._env)

    def _takes_breakpoints(self, litellm: ModuleType) -> bool:
        try:
            _, provider, _, _ = litellm.get_llm_provider(self.model, api_base=self.api_base)
        except Exception:
            return False
        return takes_breakpoints(str(provider), self.model)

    def _priced(self, litellm: ModuleType, usage: Usage) -> Usage:
        """The usage with its cost when LiteLLM knows the model's prices; never fails."""
        return replace(usage, cost_usd=price(litellm, self.model, usage))


def price(litellm: ModuleType, model: str, usage: Usage) -> float:
    """What LiteLLM says `usage` costs on `model`: the prompt tokens read from the cache and written to it at the
    model's cache prices, the rest at its input price; 0.0 when it knows no price."""
    try:
        details = {"cached_tokens": usage.cached_tokens, "cache_creation_tokens": usage.cache_write_tokens}
        tokens = litellm.Usage(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                               prompt_tokens_details=details)
        prompt, completion = litellm.cost_per_token(model=model, prompt_tokens=usage.prompt_tokens,
                                                    completion_tokens=usage.completion_tokens, usage_object=tokens)
        return float(prompt) + float(completion)
    except Exception:
        return 0.0

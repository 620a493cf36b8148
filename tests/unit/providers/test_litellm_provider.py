"""LiteLLMProvider specifics: the heavy import, credentials, model metadata, cost and the exception table."""

from __future__ import annotations

import asyncio
import gc
import os

import pytest

from cli_agent.contracts.errors import MissingCredentialsError, ProviderError, RetryableProviderError
from cli_agent.contracts.messages import Message
from cli_agent.providers import LiteLLMProvider, ProviderReply, ProviderRequest
from cli_agent.providers.litellm_provider import LITELLM_QUIETED_WARNINGS, preload
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

pytestmark = [pytest.mark.filterwarnings(f"ignore:{m}") for m in LITELLM_QUIETED_WARNINGS]

ASK = ProviderRequest((Message("user", "hi"),))


@pytest.mark.slow
def test_preload_imports_litellm_quietly_with_the_bundled_price_map() -> None:
    litellm = preload()
    assert litellm.suppress_debug_info is True
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert preload() is litellm


def test_a_missing_key_is_reported_before_any_request(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    provider = LiteLLMProvider("openai/gpt-4o-mini")
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY") as caught:
        list(provider.stream(ASK))
    assert "--api-key" in str(caught.value)


def test_model_metadata_is_guarded() -> None:
    known, unknown = LiteLLMProvider("openai/gpt-4o-mini"), LiteLLMProvider("openai/no-such-model-xyz")
    assert known.supports_native_tools() is True
    assert known.context_window() == 128000
    assert unknown.supports_native_tools() is False
    assert unknown.context_window() is None


def test_cost_is_filled_in_for_a_priced_model() -> None:
    with FakeOpenAIServer([{"text": "cheap", "usage": {"prompt_tokens": 1000, "completion_tokens": 1000}},
                           {"text": "free"}]) as server:
        priced = list(LiteLLMProvider("openai/gpt-4o-mini", api_base=server.url).stream(ASK))[-1]
        unpriced = list(LiteLLMProvider("openai/no-such-model", api_base=server.url).stream(ASK))[-1]
    assert isinstance(priced, ProviderReply) and isinstance(unpriced, ProviderReply)
    assert priced.usage.cost_usd == pytest.approx(0.00075)
    assert unpriced.usage.cost_usd == 0.0 and unpriced.usage.completion_tokens > 0


def table_cases() -> list[tuple[Exception, type[Exception], str]]:
    litellm = preload()
    common = {"llm_provider": "openai", "model": "gpt-x"}
    return [
        (litellm.ContextWindowExceededError(message="too long", **common), ProviderError, "context window"),
        (litellm.AuthenticationError(message="bad key", **common), MissingCredentialsError, "API key"),
        (litellm.RateLimitError(message="slow down", **common), RetryableProviderError, "rate limiting"),
        (litellm.BadGatewayError(message="upstream", **common), RetryableProviderError, "bad gateway"),
        (litellm.Timeout(message="slow", **common), RetryableProviderError, "in time"),
        (litellm.APIError(status_code=503, message="later", **common), RetryableProviderError, "HTTP 503"),
        (litellm.APIError(status_code=422, message="odd", **common), ProviderError, "HTTP 422"),
        (ValueError("something else"), ProviderError, "failed"),
    ]


def test_litellm_exceptions_go_through_the_table() -> None:
    provider = LiteLLMProvider("openai/gpt-x", api_base="http://127.0.0.1:9/v1")
    for exc, error, text in table_cases():
        translated = provider._translate(exc, "http://127.0.0.1:9/v1")
        assert type(translated) is error, (exc, translated)
        assert text in str(translated) and "\n" not in str(translated)
        assert "litellm." not in str(translated)  # LiteLLM's "litellm.X: X: OpenAIException - " prefix is gone


def test_no_event_loop_is_left_behind_on_the_main_thread() -> None:
    with FakeOpenAIServer([{"text": "x"}]) as server:
        list(LiteLLMProvider("openai/fake-model", api_base=server.url).stream(ASK))
    asyncio.run(asyncio.sleep(0))  # drops the main thread's current loop, as any later asyncio user does
    gc.collect()  # an abandoned loop would now warn "unclosed event loop", and pytest fails the test

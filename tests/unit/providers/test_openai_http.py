"""OpenAIHTTPProvider specifics, make_provider's routing, and the shared assembly and translation pieces."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable, Generator
from typing import cast

import httpx
import pytest

from cli_agent.contracts.errors import MissingCredentialsError, ProviderError, RetryableProviderError
from cli_agent.contracts.messages import Message, Usage
from cli_agent.providers import (
    LiteLLMProvider,
    OpenAIHTTPProvider,
    ProviderReply,
    ProviderRequest,
    ScriptedProvider,
    make_provider,
)
from cli_agent.providers.base import ReplyAssembler, Rule, is_local_url, rule_for_exception
from cli_agent.providers.litellm_provider import LITELLM_RULES
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer
from cli_agent.providers.openai_http import STATUS_RULES, TRANSPORT_RULES

ASK = ProviderRequest((Message("user", "hi"),))
REMOTE = "https://models.example.invalid/v1"


def mocked(handler: Callable[[httpx.Request], httpx.Response], **kwargs: object) -> OpenAIHTTPProvider:
    return OpenAIHTTPProvider("openai/m", api_base=REMOTE, api_key="sk-test",
                              transport=httpx.MockTransport(handler), **kwargs)  # type: ignore[arg-type]


def sse(*events: str) -> httpx.Response:
    body = "".join(f"data: {e}\n\n" for e in events)
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, content=body.encode())


def chunk(delta: dict[str, object], finish: str | None = None) -> str:
    return json.dumps({"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})


def test_routing() -> None:
    local = "http://127.0.0.1:8000/v1"
    assert isinstance(make_provider("openai/x", api_base=local, api_key=None), OpenAIHTTPProvider)
    assert isinstance(make_provider("hosted_vllm/org/m", api_base=REMOTE, api_key=None), OpenAIHTTPProvider)
    assert isinstance(make_provider("openai/gpt-4o-mini", api_base=None, api_key="k"), LiteLLMProvider)
    assert isinstance(make_provider("anthropic/claude", api_base=local, api_key=None), LiteLLMProvider)
    assert isinstance(make_provider("gpt-4o", api_base=local, api_key=None), LiteLLMProvider)
    vllm = make_provider("hosted_vllm/org/m", api_base=REMOTE + "/", api_key=None)
    assert vllm.name == f"hosted_vllm/org/m via {REMOTE}" and isinstance(vllm, OpenAIHTTPProvider)
    assert vllm.wire_model == "org/m" and vllm.url == f"{REMOTE}/chat/completions"
    with pytest.raises(Exception, match="cannot read script"):
        make_provider("scripted:/nonexistent/script.json", api_base=None, api_key=None)
    assert isinstance(ScriptedProvider([]), ScriptedProvider)


@pytest.mark.slow
def test_the_http_path_never_imports_litellm() -> None:
    code = ("import sys\nfrom cli_agent.providers import make_provider, ProviderRequest\n"
            "from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer\n"
            "from cli_agent.contracts.messages import Message\n"
            "with FakeOpenAIServer(instant='pong') as s:\n"
            "    p = make_provider('openai/m', api_base=s.url, api_key=None)\n"
            "    out = list(p.stream(ProviderRequest((Message('user', 'ping'),))))\n"
            "    p.close()\n"
            "assert out[-1].text == 'pong', out\nprint('litellm' in sys.modules)\n")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False"


def test_a_remote_openai_server_without_a_key_names_the_variable(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(MissingCredentialsError, match="OPENAI_API_KEY"):
        make_provider("openai/gpt-4o-mini", api_base=REMOTE, api_key=None)
    assert isinstance(make_provider("hosted_vllm/m", api_base=REMOTE, api_key=None), OpenAIHTTPProvider)


def test_the_key_comes_from_the_flag_then_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    with FakeOpenAIServer(instant="ok") as server:
        for api_key, expected in ((None, "Bearer sk-from-env"), ("sk-flag", "Bearer sk-flag")):
            provider = OpenAIHTTPProvider("openai/m", api_base=server.url, api_key=api_key)
            list(provider.stream(ASK))
            provider.close()
            assert server.headers[-1]["authorization"] == expected


@pytest.mark.parametrize(("status", "error", "text"), [
    (401, MissingCredentialsError, "rejected the API key"),
    (400, ProviderError, "rejected the request"),
    (404, ProviderError, "no such model"),
    (418, ProviderError, "HTTP 418"),
    (503, RetryableProviderError, "unavailable"),
    (599, RetryableProviderError, "HTTP 599"),
])
def test_statuses_go_through_the_table(status: int, error: type[Exception], text: str) -> None:
    provider = mocked(lambda _: httpx.Response(status, json={"error": {"message": "server says no"}}))
    with pytest.raises(error, match=text) as caught:
        list(provider.stream(ASK))
    assert type(caught.value) is error and "server says no" in str(caught.value)
    assert REMOTE in str(caught.value)


def test_a_json_reply_to_a_stream_request_and_a_non_streamed_request_both_work() -> None:
    whole = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi!"}}],
             "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    seen: list[dict[str, object]] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(json.loads(request.content))
        return httpx.Response(200, json=whole)

    provider = mocked(handler)
    for stream in (True, False):
        out = list(provider.stream(ProviderRequest(ASK.messages, stream=stream)))
        assert out == ["hi!", ProviderReply("hi!", (), "stop", out[-1].usage)]  # type: ignore[union-attr]
        assert out[-1].usage.total_tokens == 5  # type: ignore[union-attr]
    assert [s["stream"] for s in seen] == [True, False] and "stream_options" not in seen[1]


def test_an_error_event_inside_the_stream_is_translated() -> None:
    provider = mocked(lambda _: sse(chunk({"content": "par"}), json.dumps({"error": {"message": "overloaded"}})))
    stream = provider.stream(ASK)
    assert next(stream) == "par"
    with pytest.raises(RetryableProviderError, match="overloaded"):
        next(stream)


def test_a_stream_that_is_not_json_is_a_provider_error() -> None:
    provider = mocked(lambda _: sse("<html>oops</html>"))
    with pytest.raises(ProviderError, match="not a JSON object"):
        list(provider.stream(ASK))


def test_sse_comments_multiline_data_and_a_missing_done_are_tolerated() -> None:
    body = (": keep-alive\n\nevent: message\ndata: " + chunk({"content": "a"}) + "\n\n"
            'data: {"choices": [{"index": 0,\ndata: "delta": {"content": "b"}, "finish_reason": "stop"}]}\n\n')
    provider = mocked(lambda _: httpx.Response(200, headers={"content-type": "text/event-stream"},
                                               content=body.encode()))
    out = list(provider.stream(ASK))
    assert out[:-1] == ["a", "b"] and out[-1] == ProviderReply("ab", (), "stop")


def test_closing_the_stream_early_is_clean() -> None:
    with FakeOpenAIServer([{"text": "one two three four"}, {"text": "next"}]) as server:
        provider = OpenAIHTTPProvider("openai/m", api_base=server.url)
        stream = cast(Generator[str | ProviderReply, None, None], provider.stream(ASK))
        assert next(stream) == "one "
        stream.close()
        assert list(provider.stream(ASK))[-1].text == "next"  # type: ignore[union-attr]
        provider.close()


def test_fragments_without_an_index_and_names_repeated_are_assembled() -> None:
    assembler = ReplyAssembler()
    for fragment in ({"id": "a", "function": {"name": "read_file", "arguments": '{"pa'}},
                     {"function": {"name": "read_file", "arguments": 'th": "x"}'}},
                     {"id": "b", "function": {"name": "list_files", "arguments": ""}}):
        assembler.feed({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]})
    reply = assembler.reply()
    assert [(c.id, c.name, c.arguments) for c in reply.tool_calls] == [
        ("a", "read_file", {"path": "x"}), ("b", "list_files", {})]
    assert reply.finish_reason == "tool_calls"


def test_local_urls() -> None:
    assert all(map(is_local_url, ["http://127.0.0.1:8000/v1", "http://localhost/v1", "http://[::1]:1/v1",
                                  "http://app.localhost/v1", "localhost:8080"]))
    assert not any(map(is_local_url, [REMOTE, None, "http://10.0.0.1/v1"]))


@pytest.mark.parametrize("rules", [STATUS_RULES, TRANSPORT_RULES, LITELLM_RULES])
def test_tables_are_data_one_row_per_key(rules: tuple[Rule, ...]) -> None:
    assert len({rule.match for rule in rules}) == len(rules)
    assert all(not rule.retryable or rule.error is ProviderError for rule in rules)


def test_the_closest_class_in_the_mro_wins() -> None:
    class ConnectError(OSError):
        pass

    class Special(ConnectError):
        pass

    assert rule_for_exception(Special(), TRANSPORT_RULES, None) is not None
    assert rule_for_exception(Special(), TRANSPORT_RULES, None).match == "ConnectError"  # type: ignore[union-attr]
    assert rule_for_exception(ValueError(), TRANSPORT_RULES, None) is None


def test_the_prompt_tokens_served_from_cache_are_read_into_the_usage() -> None:
    whole = {"choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
             "usage": {"prompt_tokens": 900, "completion_tokens": 2, "prompt_tokens_details": {"cached_tokens": 850}}}
    reply = list(mocked(lambda _: httpx.Response(200, json=whole)).stream(ASK))[-1]
    usage = reply.usage  # type: ignore[union-attr]
    assert (usage.prompt_tokens, usage.cached_tokens, usage.evaluated_tokens) == (900, 850, 50)
    data = (usage + usage).to_dict()
    assert data["cached_tokens"] == 1700 and data["evaluated_tokens"] == 100
    assert Usage.from_dict(data) == usage + usage
    assert Usage.from_dict({"prompt_tokens": 1}).cached_tokens == 0  # a trace written before the field


def test_llama_cpp_timings_give_the_usage_of_a_reply_cut_before_its_last_chunk() -> None:
    from cli_agent.providers.base import ReplyAssembler

    assembler = ReplyAssembler()
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "a"}}],
                    "timings": {"cache_n": 30, "prompt_n": 5, "predicted_n": 1}})
    assembler.feed({"choices": [{"index": 0, "delta": {"content": "b"}}],
                    "timings": {"cache_n": 30, "prompt_n": 5, "predicted_n": 2}})
    assert (assembler.usage.prompt_tokens, assembler.usage.cached_tokens, assembler.usage.completion_tokens) == \
        (35, 30, 2)
    assembler.feed({"choices": [], "usage": {"prompt_tokens": 35, "completion_tokens": 3}})
    assert assembler.usage.completion_tokens == 3  # the final usage wins

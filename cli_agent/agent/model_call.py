"""One model request: the plan's system prompt and the conversation sent to the provider, its text streamed as
`TextDelta` events and a reasoning model's thinking as `ThinkingDelta` events, retried with exponential backoff and
jitter while the provider's error is retryable, within the run's deadline. Every request of a run goes this way,
the loop's (`complete`) and the judge's rewrites (`exchange`): a `ModelRequest` event before it, an
`AssistantMessage` after it, and its usage counted in the run's."""

from __future__ import annotations

import random
from collections.abc import Generator
from dataclasses import replace
from typing import TYPE_CHECKING

from cli_agent.contracts import (
    AssistantMessage,
    Decision,
    Event,
    Message,
    ModelRequest,
    Retry,
    TextDelta,
    ThinkingDelta,
    errors,
)
from cli_agent.providers import ProviderReply, ProviderRequest, Thinking

if TYPE_CHECKING:
    from cli_agent.agent.run_state import AgentSetup, RunState
    from cli_agent.prompt import Plan


def complete(setup: AgentSetup, run: RunState, plan: Plan,
             history: list[Message]) -> Generator[Event, Decision | None, ProviderReply | None]:
    """The provider's reply to the conversation, or None when the first attempt's share of the time
    (`RunState.share_deadline`) ended first (the request in flight is cut there); raises RunTimeoutError when the
    run has no time left, and ProviderError when the provider fails for good (or gave up after `max_retries`
    retries)."""
    try:
        return (yield from exchange(setup, run, request_for(setup, plan, history), fingerprint=plan.fingerprint,
                                    messages=len(history) + 1, stream_text=setup.protocol.name != "json",
                                    until=run.share_deadline))
    except errors.RunTimeoutError:
        if run.share_deadline is None or run.deadline - setup.clock() <= 1:
            raise
        return None


def request_for(s: AgentSetup, plan: Plan, history: list[Message]) -> ProviderRequest:
    """The request `complete` sends for the conversation: the plan's system prompt, then `history`."""
    messages = tuple(([Message("system", plan.system)] if plan.system else []) + history)
    if any(m.images for m in messages) and not _sees_images(s.provider):
        messages = tuple(_labelled(m) if m.images else m for m in messages)
    return ProviderRequest(messages=messages, tools=plan.schemas if s.protocol.sends_tools else None,
                           options=plan.request_options)


def share_spent(s: AgentSetup, run: RunState, plan: Plan, history: list[Message]) -> float | None:
    """Whether the first attempt gives way before its next request: None while its share of the time
    (`RunState.share_deadline`) lasts and the request's wait for its first token fits in it; 0.0 once the share is
    spent; else that wait. The provider tells the wait (the bundled model reads a prompt at tens of tokens a
    second); a provider that cannot tell (a hosted model, a speed never measured) is not asked to."""
    if run.share_deadline is None:
        return None
    now = s.clock()
    if now >= run.share_deadline:
        return 0.0
    estimate = getattr(s.provider, "first_token_seconds", None)
    wait = estimate(request_for(s, plan, history)) if callable(estimate) else None
    return wait if wait is not None and now + wait > run.share_deadline else None


def exchange(s: AgentSetup, run: RunState, request: ProviderRequest, *, fingerprint: str, messages: int,
             stream_text: bool, until: float | None = None) -> Generator[Event, Decision | None, ProviderReply]:
    """`request` as the trace shows it: a `ModelRequest` (step `run.steps`, `messages` counted as the plan counts
    them), the request itself (`send`), then the reply as an `AssistantMessage`, its usage added to the run's."""
    yield ModelRequest(step=run.steps, fingerprint=fingerprint, messages=messages)
    reply = yield from send(s, run, request, stream_text=stream_text, until=until)
    run.usage = run.usage + reply.usage
    yield AssistantMessage(text=reply.text, tool_calls=reply.tool_calls, finish_reason=reply.finish_reason,
                           usage=reply.usage)
    return reply


def send(s: AgentSetup, run: RunState, request: ProviderRequest, *, stream_text: bool,
         until: float | None = None) -> Generator[Event, Decision | None, ProviderReply]:
    """`request` sent within the run's deadline (or `until`, when sooner), retried while the provider's error is
    retryable (a `Retry` event each time); its text streamed as `TextDelta` when `stream_text`."""
    attempt = 0
    end = run.deadline if until is None else min(run.deadline, until)
    while True:
        remaining = end - s.clock()
        if remaining <= 0:
            raise errors.RunTimeoutError("no time left for another model request")
        try:
            reply: ProviderReply | None = None
            for item in s.provider.stream(replace(request, timeout_s=remaining)):
                if isinstance(item, str):
                    if stream_text and item:
                        yield TextDelta(text=item)
                elif isinstance(item, Thinking):
                    yield ThinkingDelta(text=item.text)
                else:
                    reply = item
            if reply is None:
                raise errors.ProviderError("the provider ended its reply without a result")
            return reply
        except errors.RetryableProviderError as exc:
            attempt += 1
            if attempt > s.limits.max_retries:
                raise errors.ProviderError(f"{exc} (gave up after {attempt} tries)") from exc
            delay = max(0.0, min(backoff(s.limits.retry_base_delay, attempt), end - s.clock()))
            yield Retry(attempt=attempt, delay_s=round(delay, 3), reason=str(exc))
            s.sleep(delay)


def _sees_images(provider: object) -> bool:
    supports = getattr(provider, "supports_images", None)
    return not callable(supports) or bool(supports())


def _labelled(message: Message) -> Message:
    """The message with its images as their labels: what a model without vision is sent of an image a tool read
    (the user's own are refused before the run, `session.images`)."""
    return replace(message, images=tuple(replace(i, data=None) for i in message.images))


def backoff(base: float, attempt: int) -> float:
    """The delay before retry `attempt` (1, 2, ...): `base` doubled each time, with jitter (half to all of it)."""
    return base * 2 ** (attempt - 1) * (0.5 + random.random() / 2)

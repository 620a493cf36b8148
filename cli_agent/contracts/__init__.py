"""The shapes every layer shares: the error tree and its exit codes (`errors`), the conversation (`messages`), a
tool call's result (`envelope`), the typed events of a run (`events`), a planned file change and its diff (`change`,
`hunks`), lines as the model is shown them (`line_numbers`), and what text may reach a terminal or a JSON line
(`escape`).

The ground floor: imports nothing of cli_agent.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cli_agent.contracts import errors, events
    from cli_agent.contracts.change import Change, ChangeKind, Staged, sha_of
    from cli_agent.contracts.envelope import Envelope, Later, ToolError
    from cli_agent.contracts.errors import (
        CliAgentError,
        ConfigError,
        DeniedError,
        MissingCredentialsError,
        ProviderError,
        RetryableProviderError,
        RunTimeoutError,
        SpecError,
        TraceError,
        UsageError,
        WorkflowError,
    )
    from cli_agent.contracts.escape import clip, escape_for_terminal, json_for_output
    from cli_agent.contracts.events import (
        ApprovalAsked,
        ApprovalDecided,
        AssistantMessage,
        CommandOutput,
        ConversationReset,
        Event,
        EventStream,
        HookRan,
        MessagesAppended,
        ModelRequest,
        PlanUpdated,
        Retry,
        RunFinished,
        RunStarted,
        SubagentEvent,
        TextDelta,
        ThinkingDelta,
        ToolCallsProposed,
        ToolResult,
        Verification,
        Warning,
        event_from_dict,
    )
    from cli_agent.contracts.hunks import Region
    from cli_agent.contracts.images import IMAGE_SUFFIXES, MAX_SOURCE_BYTES, ImagePart, image_from_bytes, image_kind
    from cli_agent.contracts.line_numbers import numbered
    from cli_agent.contracts.messages import Message, ToolCall, Usage, reset_messages
    from cli_agent.contracts.outcomes import Answer, Decision, StopReason

__all__ = [
    "IMAGE_SUFFIXES",
    "MAX_SOURCE_BYTES",
    "Answer",
    "ApprovalAsked",
    "ApprovalDecided",
    "AssistantMessage",
    "Change",
    "ChangeKind",
    "CliAgentError",
    "CommandOutput",
    "ConfigError",
    "ConversationReset",
    "Decision",
    "DeniedError",
    "Envelope",
    "Event",
    "EventStream",
    "HookRan",
    "ImagePart",
    "Later",
    "Message",
    "MessagesAppended",
    "MissingCredentialsError",
    "ModelRequest",
    "PlanUpdated",
    "ProviderError",
    "Region",
    "Retry",
    "RetryableProviderError",
    "RunFinished",
    "RunStarted",
    "RunTimeoutError",
    "SpecError",
    "Staged",
    "StopReason",
    "SubagentEvent",
    "TextDelta",
    "ThinkingDelta",
    "ToolCall",
    "ToolCallsProposed",
    "ToolError",
    "ToolResult",
    "TraceError",
    "Usage",
    "UsageError",
    "Verification",
    "Warning",
    "WorkflowError",
    "clip",
    "errors",
    "escape_for_terminal",
    "event_from_dict",
    "events",
    "image_from_bytes",
    "image_kind",
    "json_for_output",
    "numbered",
    "reset_messages",
    "sha_of",
]


def __getattr__(name: str) -> object:
    """An export loads when it is first asked for: a front end imports only what its path uses."""
    if name in ("Change", "ChangeKind", "Staged", "sha_of"):
        from cli_agent.contracts import change

        return getattr(change, name)
    if name in ("Envelope", "Later", "ToolError"):
        from cli_agent.contracts import envelope

        return getattr(envelope, name)
    if name in (
        "CliAgentError",
        "ConfigError",
        "DeniedError",
        "MissingCredentialsError",
        "ProviderError",
        "RetryableProviderError",
        "RunTimeoutError",
        "SpecError",
        "TraceError",
        "UsageError",
        "WorkflowError",
    ):
        from cli_agent.contracts import errors

        return getattr(errors, name)
    if name in ("clip", "escape_for_terminal", "json_for_output"):
        from cli_agent.contracts import escape

        return getattr(escape, name)
    if name in (
        "ApprovalAsked",
        "ApprovalDecided",
        "AssistantMessage",
        "CommandOutput",
        "ConversationReset",
        "Event",
        "EventStream",
        "HookRan",
        "MessagesAppended",
        "ModelRequest",
        "PlanUpdated",
        "Retry",
        "RunFinished",
        "RunStarted",
        "SubagentEvent",
        "TextDelta",
        "ThinkingDelta",
        "ToolCallsProposed",
        "ToolResult",
        "Verification",
        "Warning",
        "event_from_dict",
    ):
        from cli_agent.contracts import events

        return getattr(events, name)
    if name in ("Region",):
        from cli_agent.contracts import hunks

        return getattr(hunks, name)
    if name in ("IMAGE_SUFFIXES", "ImagePart", "MAX_SOURCE_BYTES", "image_from_bytes", "image_kind"):
        from cli_agent.contracts import images

        return getattr(images, name)
    if name in ("numbered",):
        from cli_agent.contracts import line_numbers

        return getattr(line_numbers, name)
    if name in ("Message", "ToolCall", "Usage", "reset_messages"):
        from cli_agent.contracts import messages

        return getattr(messages, name)
    if name in ("Answer", "Decision", "StopReason"):
        from cli_agent.contracts import outcomes

        return getattr(outcomes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

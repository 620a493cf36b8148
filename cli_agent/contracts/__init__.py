"""The shapes every layer shares: the error tree and its exit codes (`errors`), the conversation (`messages`), a
tool call's result (`envelope`), the typed events of a run (`events`), a planned file change and its diff (`change`,
`hunks`), lines as the model is shown them (`line_numbers`), and what text may reach a terminal or a JSON line
(`escape`).

The ground floor: imports nothing of cli_agent.
"""

from cli_agent.contracts import errors, events
from cli_agent.contracts.change import *
from cli_agent.contracts.envelope import *
from cli_agent.contracts.errors import *
from cli_agent.contracts.escape import *
from cli_agent.contracts.events import *
from cli_agent.contracts.hunks import *
from cli_agent.contracts.images import *
from cli_agent.contracts.launch import *
from cli_agent.contracts.line_numbers import *
from cli_agent.contracts.messages import *
from cli_agent.contracts.outcomes import *
from cli_agent.contracts.records import *

__all__ = [
    "IMAGE_SUFFIXES", "LATEST", "MAX_SOURCE_BYTES", "Answer", "AppState", "ApprovalAsked", "ApprovalDecided",
    "AssistantMessage", "Change", "ChangeKind", "CliAgentError", "CommandOutput", "ConfigError", "ConversationReset",
    "Decision", "DeniedError", "Envelope", "Event", "EventStream", "HookRan", "ImagePart", "Later", "Message",
    "MessagesAppended", "MissingCredentialsError", "ModelRequest", "NetworkConnection", "PlanUpdated", "ProviderError",
    "Region", "Retry", "RetryableProviderError", "RunFinished", "RunStarted", "RunTimeoutError", "SpecError", "Staged",
    "StopReason", "SubagentEvent", "TextDelta", "ThinkingDelta", "ToolCall", "ToolCallsProposed", "ToolError",
    "ToolResult", "TraceError", "Usage", "UsageError", "Verification", "Warning", "WorkflowError", "clip", "dataclass",
    "errors", "escape_for_terminal", "event_from_dict", "events", "flags_given", "image_from_bytes", "image_kind",
    "is_interactive", "json_for_output", "numbered", "reset_messages", "sha_of"
]

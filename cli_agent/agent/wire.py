"""How a provider reply becomes text, tool calls or a precise error, and how results go back to the model.

*native*: the reply's `tool_calls`; each result goes back as a `tool` message.
*json*: the reply's text holds exactly one `{"tool": str, "parameters": object, "terminate": bool}` object
(prose around it or a ```json fence is tolerated); the result goes back as a user message.
*plain*: `--no-tools` chat; every reply is an answer.
A reply that can't be used yields `Parsed.error`: what was wrong, where, and the exact expected shape. Tool call
arguments holding a lone surrogate (valid JSON, `"\\ud800"`, but no text) are such a reply; an answer holding one
keeps it visibly escaped (`\\ud800`), so nothing later fails to encode it.
"""

from __future__ import annotations

import json
import re
from typing import TYPE_CHECKING, Any, Protocol

from cli_agent.contracts import Message, ToolCall, dataclass

if TYPE_CHECKING:
    from cli_agent.providers import ProviderReply

__all__ = ["protocol_for"]

JSON_SHAPE = '{"tool": "<tool name>", "parameters": {...}, "terminate": false}'
ANSWER_TOOL = "answer"  # the pseudo-tool a grammar-constrained model uses for its final answer
_SURROGATE = re.compile("[\ud800-\udfff]")
_ATTEMPTED_CALL = re.compile(r"""^\s*(?:```\w*\s*)?\{|\{\s*["']?tool\b""")  # a reply that tries a call
SURROGATE_ERROR = ("Your tool call's arguments hold a lone surrogate (a \\ud800-\\udfff escape without its pair), "
                   "which is not text. Send the call again with valid Unicode text.")


def _visible(text: str) -> str:
    """`text` with each lone surrogate written as its escape (`\\ud800`)."""
    return _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def _holds_surrogate(value: Any) -> bool:
    if isinstance(value, str):
        return _SURROGATE.search(value) is not None
    if isinstance(value, dict):
        return any(_holds_surrogate(k) or _holds_surrogate(v) for k, v in value.items())
    if isinstance(value, list | tuple):
        return any(_holds_surrogate(v) for v in value)
    return False


@dataclass(frozen=True)
class Parsed:
    text: str = ""  # the answer, or prose that came with the calls
    calls: tuple[ToolCall, ...] = ()
    terminate: bool = False
    error: str | None = None  # set when the reply is unusable; goes back to the model


class WireProtocol(Protocol):
    name: str
    sends_tools: bool

    def parse(self, reply: ProviderReply, step: int) -> Parsed: ...
    def assistant_message(self, reply: ProviderReply, parsed: Parsed) -> Message: ...
    def result_message(self, call: ToolCall, content: str) -> Message: ...
    def error_message(self, error: str) -> Message: ...


class NativeProtocol:
    name = "native"
    sends_tools = True

    def parse(self, reply: ProviderReply, step: int) -> Parsed:
        if reply.tool_calls:
            if any(_holds_surrogate([c.name, c.arguments, c.raw_arguments]) for c in reply.tool_calls):
                return Parsed(error=SURROGATE_ERROR)
            calls = tuple(c if c.id else ToolCall(f"call_{step}_{i}", c.name, c.arguments, c.raw_arguments,
                                                  c.error) for i, c in enumerate(reply.tool_calls, 1))
            return Parsed(text=_visible(reply.text or ""), calls=calls)
        if not (reply.text or "").strip():
            return Parsed(error="Your reply was empty: it had neither text nor a tool call. Call a tool, or "
                                "answer in plain text if the task is done.")
        return Parsed(text=_visible(reply.text))

    def assistant_message(self, reply: ProviderReply, parsed: Parsed) -> Message:
        return Message("assistant", reply.text or None, tool_calls=parsed.calls, thinking_blocks=reply.thinking_blocks)

    def result_message(self, call: ToolCall, content: str) -> Message:
        return Message("tool", content, tool_call_id=call.id, name=call.name or "unknown")

    def error_message(self, error: str) -> Message:
        return Message("user", error)


class PlainProtocol(NativeProtocol):
    name = "plain"
    sends_tools = False

    def parse(self, reply: ProviderReply, step: int) -> Parsed:
        if not (reply.text or "").strip():
            return Parsed(error="Your reply was empty.")
        return Parsed(text=_visible(reply.text))


class JsonProtocol:
    name = "json"
    sends_tools = False

    def parse(self, reply: ProviderReply, step: int) -> Parsed:
        text = reply.text or ""
        if not text.strip():
            return Parsed(error=f"Your reply was empty. Reply with exactly one JSON object {JSON_SHAPE}, "
                                "or with plain text (no JSON) if the task is done.")
        objects, first_failure = _json_objects(text)
        calls = [o for o in objects if isinstance(o, dict) and "tool" in o]
        if not calls:
            if first_failure is not None and _ATTEMPTED_CALL.search(text):  # `{tool: read_file}` is a bad call
                return Parsed(error=f"Your tool call is not valid JSON: {first_failure}. "
                                    f"Reply with exactly one JSON object {JSON_SHAPE}.")
            return Parsed(text=_visible(text.strip()))
        if len(calls) > 1:
            return Parsed(error=f"Your reply holds {len(calls)} tool calls; send exactly one JSON object "
                                f"{JSON_SHAPE} per reply and wait for its result.")
        return _call_from(calls[0], f"call_{step}_1", text)

    def assistant_message(self, reply: ProviderReply, parsed: Parsed) -> Message:
        return Message("assistant", reply.text or "")

    def result_message(self, call: ToolCall, content: str) -> Message:
        return Message("user", f"Result of {call.name} (call {call.id}):\n{content}")

    def error_message(self, error: str) -> Message:
        return Message("user", error)


def _json_objects(text: str) -> tuple[list[Any], str | None]:
    """Every top-level JSON object in `text`, and where the first `{` that failed to decode went wrong."""
    decoder = json.JSONDecoder(strict=False)  # a raw newline inside a string (small models write them) is fine
    found: list[Any] = []
    failure: str | None = None
    i = text.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(text, i)
        except (json.JSONDecodeError, RecursionError) as exc:  # RecursionError: nested deeper than it can follow
            if failure is None:
                failure = (f"{exc.msg} (line {exc.lineno}, column {exc.colno})"
                           if isinstance(exc, json.JSONDecodeError) else "the JSON is nested too deeply")
            i = text.find("{", i + 1)
            continue
        found.append(obj)
        i = text.find("{", end)
    return found, failure


def _call_from(obj: dict[str, Any], call_id: str, text: str) -> Parsed:
    tool, params, terminate = obj.get("tool"), obj.get("parameters"), obj.get("terminate")
    problems = []
    if not isinstance(tool, str) or not tool:
        problems.append('field "tool" must be a non-empty string')
    if "parameters" not in obj:
        problems.append('field "parameters" is missing')
    elif not isinstance(params, dict):
        problems.append(f'field "parameters" must be an object, not {type(params).__name__}')
    if "terminate" not in obj:
        problems.append('field "terminate" is missing')
    elif not isinstance(terminate, bool):
        problems.append(f'field "terminate" must be true or false, not {json.dumps(terminate)}')
    extra = sorted(set(obj) - {"tool", "parameters", "terminate"})
    if extra:
        problems.append(f"unexpected field(s): {', '.join(extra)}")
    if problems:
        return Parsed(error=f"Your tool call is malformed: {'; '.join(problems)}. Expected exactly {JSON_SHAPE}.")
    assert isinstance(tool, str) and isinstance(params, dict)
    if tool == ANSWER_TOOL:
        answer = params.get("text")
        return Parsed(text=_visible(answer) if isinstance(answer, str) else json.dumps(params))
    if _holds_surrogate([tool, params]):
        return Parsed(error=SURROGATE_ERROR)
    raw = json.dumps(params, ensure_ascii=False)
    return Parsed(calls=(ToolCall(call_id, tool, params, raw),), terminate=bool(terminate))


def protocol_for(name: str) -> WireProtocol:
    classes: dict[str, type[WireProtocol]] = {"native": NativeProtocol, "json": JsonProtocol, "plain": PlainProtocol}
    return classes[name]()

"""read_file on an image: the model is shown the image as an image part, after the turn's tool results (every
provider takes images in a user message; OpenAI's refuses them in a tool result); the trace keeps only its label."""

from __future__ import annotations

import json
import struct

from agentkit import call, make_agent, run

from cli_agent.contracts.events import MessagesAppended, ToolResult

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", 640, 480) + b"\x08\x06\x00\x00\x00" + b"\x00" * 16


def test_an_image_read_is_shown_after_the_turns_results(tmp_path):
    (tmp_path / "shot.png").write_bytes(PNG)
    (tmp_path / "notes.txt").write_text("hello\n")
    agent, provider = make_agent(tmp_path, [
        {"tool_calls": [call("read_file", path="shot.png"), call("read_file", path="notes.txt")]},
        {"text": "a screenshot"}])
    events, finished = run(agent, "what is in shot.png?")
    assert finished.answer == "a screenshot"
    last = provider.requests[-1].messages
    roles = [m.role for m in last]
    assert roles[-3:] == ["tool", "tool", "user"]  # both results first, then the image
    shown = last[-1]
    assert [i.label for i in shown.images] == ["[image: shot.png 640×480]"] and shown.images[0].data == PNG
    result = next(e for e in events if isinstance(e, ToolResult))
    assert result.envelope.data["width"] == 640 and "[image: shot.png 640×480]" in result.envelope.data["notice"]
    kept = [e.to_dict() for e in events if isinstance(e, MessagesAppended | ToolResult)]
    saved = json.dumps(kept, ensure_ascii=False)
    assert "[image: shot.png 640×480]" in saved and "iVBOR" not in saved


def test_an_image_too_large_is_not_shown_and_says_the_limit(tmp_path):
    (tmp_path / "huge.png").write_bytes(PNG + b"\x00" * (5 * 1024 * 1024))
    agent, provider = make_agent(tmp_path, [{"tool_calls": [call("read_file", path="huge.png")]}, {"text": "ok"}])
    events, _ = run(agent, "look at huge.png")
    result = next(e for e in events if isinstance(e, ToolResult))
    assert "limited to 5 MB" in result.envelope.data["notice"]
    assert not any(m.images for m in provider.requests[-1].messages)


def test_a_model_without_vision_is_sent_the_label_of_an_image_it_read(tmp_path):
    from cli_agent.providers.scripted import ScriptedProvider

    (tmp_path / "shot.png").write_bytes(PNG)
    blind = ScriptedProvider([{"tool_calls": [call("read_file", path="shot.png")]}, {"text": "cannot see it"}],
                             vision=False)
    agent, _ = make_agent(tmp_path, [], provider=blind)
    _, finished = run(agent, "look at shot.png")
    assert finished.answer == "cannot see it"
    shown = blind.requests[-1].messages[-1]
    assert shown.images[0].data is None  # sent as its label
    assert shown.to_openai()["content"][1] == {"type": "text", "text": "\n[image: shot.png 640×480]"}

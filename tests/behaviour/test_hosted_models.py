"""The real CLI with a hosted model on loopback servers: images from `@shot.png` and `--image`, thinking as its own
event in stream-json, cached tokens and their price in `--output json`, `cache = false`, and the one-line refusals."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import zlib

import pytest

from cli_agent.providers.loopback.fake_anthropic import FakeAnthropicServer
from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.slow
CLAUDE = "anthropic/claude-sonnet-4-5"


def png(width: int, height: int) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b""))


@pytest.fixture
def env(tmp_path):
    out = {k: v for k, v in os.environ.items() if not k.startswith(("CLI_AGENT_", "OPENAI_", "ANTHROPIC_"))}
    return out | {"CLI_AGENT_HOME": str(tmp_path / "home"), "CI": "true", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}


def cli(args, env, cwd):
    return subprocess.run([sys.executable, "-m", "cli_agent", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=180)


def test_images_go_as_parts_and_the_trace_keeps_only_their_labels(tmp_path, env):
    (tmp_path / "shot.png").write_bytes(png(64, 48))
    (tmp_path / "diagram.gif").write_bytes(b"GIF89a" + struct.pack("<HH", 320, 200) + b"\x00" * 20)
    trace = tmp_path / "trace.jsonl"
    with FakeAnthropicServer([{"text": "a red rectangle"}]) as server:
        result = cli(["-p", "what is in @shot.png?", "--image", str(tmp_path / "diagram.gif"), "-m", CLAUDE,
                      "--api-base", server.url, "--api-key", "k", "-o", "json", "--trace", str(trace)], env, tmp_path)
        body = server.requests[0]
    assert result.returncode == 0, result.stderr
    content = body["messages"][0]["content"]
    images = [b for b in content if b["type"] == "image"]
    assert [i["source"]["media_type"] for i in images] == ["image/png", "image/gif"]
    assert "[image: shot.png 64×48] [image: diagram.gif 320×200]" in content[0]["text"]
    saved = trace.read_text(encoding="utf-8")
    assert "[image: shot.png 64×48]" in saved and "base64" not in saved and "iVBOR" not in saved


@pytest.mark.parametrize(("args", "says"), [
    (["--image", "bomb.gif"], "images are limited to 5 MB and 8000 pixels a side, and it is too large to downscale"),
    (["--image", "notes.txt"], "is not a PNG, JPEG, GIF or WebP image"),
    (["--image", "missing.png"], "cannot read the image missing.png"),
])
def test_a_bad_image_is_refused_in_one_line_before_any_request(tmp_path, env, args, says):
    (tmp_path / "bomb.gif").write_bytes(b"GIF89a" + struct.pack("<HH", 60000, 60000) + b"\x00" * 20)
    (tmp_path / "notes.txt").write_text("not an image")
    with FakeAnthropicServer([]) as server:
        result = cli(["-p", "look", *args, "-m", CLAUDE, "--api-base", server.url, "--api-key", "k"], env, tmp_path)
        assert server.requests == []
    assert result.returncode == 2
    assert says in result.stderr.strip().splitlines()[-1] and "Traceback" not in result.stderr


def test_an_image_over_the_limits_goes_downscaled(tmp_path, env):
    pytest.importorskip("PIL")
    (tmp_path / "wide.png").write_bytes(png(9000, 2))
    with FakeAnthropicServer([{"text": "a red line"}]) as server:
        result = cli(["-p", "what is @wide.png", "-m", CLAUDE, "--api-base", server.url, "--api-key", "k"], env,
                     tmp_path)
        content = server.requests[0]["messages"][0]["content"]
    assert result.returncode == 0, result.stderr
    assert "[image: wide.png 8000×2]" in content[0]["text"] and content[1]["type"] == "image"


def test_a_model_without_vision_is_refused_before_the_request(tmp_path, env):
    (tmp_path / "shot.png").write_bytes(png(4, 4))
    with FakeOpenAIServer([]) as server:
        result = cli(["-p", "what is @shot.png", "-m", "deepseek/deepseek-chat", "--api-base", server.url,
                      "--api-key", "k"], env, tmp_path)
        assert server.requests == []
    assert result.returncode == 2
    last = result.stderr.strip().splitlines()[-1]
    assert "deepseek/deepseek-chat via" in last and "takes no images (the model has no vision)" in last


def test_thinking_is_its_own_event_and_never_the_answer(tmp_path, env):
    with FakeOpenAIServer([{"thinking": "weigh both options", "text": "option B"}]) as server:
        result = cli(["-p", "choose", "-m", "openai/deepseek-reasoner", "--api-base", server.url,
                      "--reasoning-effort", "high", "-o", "stream-json"], env, tmp_path)
        body = server.requests[0]
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    thought = "".join(e["text"] for e in events if e["type"] == "thinking_delta")
    assert thought == "weigh both options"
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "option B"
    assert events[-1]["answer"] == "option B"
    assert body["reasoning_effort"] == "high"


def test_json_usage_reports_cached_tokens_and_cache_false_sends_no_breakpoint(tmp_path, env):
    script = [{"tool_calls": [{"name": "list_files", "arguments": {}}]}, {"text": "done"}]
    reports, bodies = {}, {}
    for cache in ("true", "false"):
        with FakeAnthropicServer(script) as server:
            result = cli(["-p", "list the files", "-m", CLAUDE, "--api-base", server.url, "--api-key", "k", "-y",
                          "-o", "json"], env | {"CLI_AGENT_CACHE": cache}, tmp_path)
            bodies[cache] = server.requests
        assert result.returncode == 0, result.stderr
        reports[cache] = json.loads(result.stdout)["usage"]
    assert all("cache_control" in json.dumps(b) for b in bodies["true"])
    assert not any("cache_control" in json.dumps(b) for b in bodies["false"])
    assert reports["true"]["cached_tokens"] > 0 and reports["true"]["cache_write_tokens"] > 0
    assert reports["false"]["cached_tokens"] == 0
    assert 0 < reports["true"]["cost_usd"] < reports["false"]["cost_usd"]


def test_an_effort_the_model_ignores_is_a_note_not_an_error(tmp_path, env):
    with FakeOpenAIServer([{"text": "hi"}]) as server:  # gpt-4o-mini through LiteLLM: it says the model does not reason
        result = cli(["-p", "hi", "-m", "gpt-4o-mini", "--api-base", server.url, "--api-key", "k",
                      "--reasoning-effort", "low", "-o", "json"], env, tmp_path)
        body = server.requests[0]
    assert result.returncode == 0, result.stderr
    assert "gpt-4o-mini takes no reasoning effort (LiteLLM says it does not reason)" in " ".join(
        json.loads(result.stdout)["notes"])
    assert "reasoning_effort" not in body


def test_the_bundled_or_scripted_model_says_it_takes_no_effort(tmp_path, env):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "hi"}]))
    result = cli(["-p", "hi", "-m", f"scripted:{script}", "--reasoning-effort", "high", "-o", "json"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert "s.json takes no reasoning effort: reasoning_effort = 'high' is not sent" in " ".join(
        json.loads(result.stdout)["notes"])

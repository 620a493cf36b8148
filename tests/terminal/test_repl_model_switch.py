"""`/model` in a pseudo-terminal: a model of another provider goes to that provider's own API with that provider's
key, never to the `--api-base` and `--api-key` the REPL was given for its first model; the picker says where each
goes. Two servers on 127.0.0.1 stand for the local server and for Anthropic's API."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar

import pytest
from screenkit import Screen
from termkit import PROMPT, Term

from cli_agent.providers.loopback.fake_openai import FakeOpenAIServer

pytestmark = pytest.mark.slow


_EVENTS = [("message_start", {"type": "message_start", "message": {
                "id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-20250514",
                "content": [], "stop_reason": None, "stop_sequence": None,
                "usage": {"input_tokens": 5, "output_tokens": 1}}}),
           ("content_block_start", {"type": "content_block_start", "index": 0,
                                    "content_block": {"type": "text", "text": ""}}),
           ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                    "delta": {"type": "text_delta", "text": "anthropic answer"}}),
           ("content_block_stop", {"type": "content_block_stop", "index": 0}),
           ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
                              "usage": {"output_tokens": 3}}),
           ("message_stop", {"type": "message_stop"})]


class _Anthropic(BaseHTTPRequestHandler):
    """Anthropic's Messages API as far as one streamed text reply goes; what each request was sent with is kept."""

    seen: ClassVar[list[tuple[str, dict[str, str]]]] = []

    def do_POST(self) -> None:
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append((self.path, {k.lower(): v for k, v in self.headers.items()}))
        body = "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n" for name, data in _EVENTS).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.parametrize("cols", [60, 80])
def test_another_providers_model_goes_to_that_provider_with_its_own_key(tmp_path, cols):
    _Anthropic.seen = []
    anthropic = ThreadingHTTPServer(("127.0.0.1", 0), _Anthropic)
    threading.Thread(target=anthropic.serve_forever, daemon=True).start()
    try:
        with FakeOpenAIServer([{"text": "local answer"}]) as local:
            t = Term(tmp_path, None, cols=cols, wait=None,
                     args=("--model", "openai/local-model", "--api-base", local.url, "--api-key", "sk-local-only"),
                     env={"ANTHROPIC_API_KEY": "sk-ant-test",
                          "ANTHROPIC_API_BASE": f"http://127.0.0.1:{anthropic.server_address[1]}",
                          "OPENAI_API_KEY": None})
            screen = Screen(t.child, cols)
            t.expect(PROMPT)
            t.say("hello")
            t.expect("local answer")
            t.expect(PROMPT)
            t.say("/model")
            t.expect("Switch to which model")
            t.expect("Enter choose")
            listed = " ".join(" ".join(screen.lines()).split())
            assert "anthropic/claude-sonnet-4-20250514 (its provider's API, with ANTHROPIC_API_KEY)" in listed
            t.child.send("2")
            t.child.send("\r")
            t.expect("model: anthropic/")
            said = " ".join(t.expect(PROMPT).split())
            assert "its provider's API, with ANTHROPIC_API_KEY" in said
            t.say("and now?")
            t.expect("anthropic answer")
            t.expect(PROMPT)
            assert t.quit() == 0
            assert len(local.requests) == 1  # only the first message went to --api-base
            assert all(h.get("authorization") == "Bearer sk-local-only" for h in local.headers)
        assert _Anthropic.seen and all(path == "/v1/messages" for path, _ in _Anthropic.seen)
        assert all(h.get("x-api-key") == "sk-ant-test" and "sk-local-only" not in json.dumps(h)
                   for _, h in _Anthropic.seen)
    finally:
        anthropic.shutdown()
        anthropic.server_close()


def test_a_session_is_listed_under_the_model_it_switched_to(tmp_path):
    import subprocess
    import sys

    other = tmp_path / "other.json"
    other.write_text(json.dumps([{"text": "answer from the other"}]))
    t = Term(tmp_path, [{"text": "answer from the first"}], cols=80)
    t.say("first question")
    t.expect("answer from the first")
    t.expect(PROMPT)
    t.say(f"/model scripted:{other}")
    t.expect(PROMPT)
    t.say("second question")
    t.expect("answer from the other")
    t.expect(PROMPT)
    assert t.quit() == 0
    again = Term(tmp_path, [{"text": "unused"}], cols=80)  # a new session: /resume lists the one before
    again.say("/resume")
    again.expect("Resume which session")
    again.expect("other.json")  # under the model it went on with, not its first
    again.child.send("\x1b")
    again.expect(PROMPT)
    assert again.quit() == 0
    listed = subprocess.run([sys.executable, "-m", "cli_agent", "sessions", "--json", "-C", str(t.ws)],
                            capture_output=True, text=True, env=t.child.env, timeout=60)
    assert [s["model"] for s in json.loads(listed.stdout)] == [f"scripted:{other}"]

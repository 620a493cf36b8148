"""The REPL in a pseudo-terminal with images and a reasoning model's thinking: `@shot.png` attached as an image
(its label on screen and in the trace, never its bytes), the thinking folded to one line, `/expand` showing it."""

from __future__ import annotations

import json
import struct

import pytest
from termkit import PROMPT

pexpect = pytest.importorskip("pexpect")
pytestmark = pytest.mark.slow  # a real REPL in a pty: seconds a test

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + struct.pack(">II", 4, 3) + b"\x08\x06\x00\x00\x00" + b"\x00" * 16
THOUGHT = "The screenshot shows a form; the error sits under the email field, so check the validator."


def test_an_image_and_thinking_at_the_repl(term):
    t = term([{"thinking": THOUGHT, "text": "The email validator rejects plus signs."}])
    (t.ws / "shot.png").write_bytes(PNG)
    t.say("why does @shot.png fail?")
    seen = t.expect(r"· 1 step")
    assert "attached [image: shot.png 4×3]" in seen
    # the folded thought: one line, cut to the terminal's width (here wide enough for all of it), with its count
    assert "✻ thought: The screenshot shows a form;" in seen and "(16 words · /expand)" in seen
    assert "The email validator rejects plus signs." in seen
    t.expect(PROMPT)
    t.say("/expand")
    assert "✻ thinking" in t.expect("so check the validator")
    t.expect(PROMPT)
    assert t.quit() == 0
    records = t.traces()
    started = next(r for r in records if r["type"] == "run_started")
    assert "[image: shot.png 4×3]" in started["prompt"]
    saved = json.dumps(records, ensure_ascii=False)
    assert '"images": [{"name": "shot.png", "media_type": "image/png", "width": 4, "height": 3}]' in saved
    assert "base64" not in saved and "iVBOR" not in saved
    assert "".join(r["text"] for r in records if r["type"] == "thinking_delta") == THOUGHT

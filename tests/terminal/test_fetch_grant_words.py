"""`a` at a web page's question grants its site, and the REPL says so in those words; a later fetch of the site,
approved by that grant, says it once (not "approved by … approved")."""

from __future__ import annotations

import pytest
from screenkit import Terms
from termkit import PROMPT
from webkit import web_server

pytestmark = pytest.mark.slow


def _fetch(url: str) -> dict:
    return {"tool_calls": [{"name": "web_fetch", "arguments": {"url": url}}]}


@pytest.mark.parametrize("cols", [80, 60])
def test_a_grants_the_site_and_a_later_fetch_says_so_once(tmp_path, cols):
    with web_server() as (base, _hits), Terms(tmp_path) as terms:
        t, screen = terms.start([_fetch(f"{base}/page"), _fetch(f"{base}/page?again=1"), {"text": "read both"}], cols,
                                config="[web]\nallow_private = true\n")
        t.say("read the notes")
        t.expect(r"Run it\?")
        t.child.send("a")
        t.expect("read both")
        t.expect(PROMPT)
        text = " ".join(screen.text().split())
        assert "✓ yes to every fetch of 127.0.0.1, for this session" in text, text[-1500:]
        assert "yes to all" not in text
        assert "(web_fetch to 127.0.0.1 approved for this session)" in text and "approved by web_fetch" not in text
        assert t.quit() == 0

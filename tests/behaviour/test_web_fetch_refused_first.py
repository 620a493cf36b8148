"""A web page whose address web_fetch may never reach (loopback, private, link-local, unless the user config allows
them) is refused at once, before any approval question: nothing is asked for a call that cannot run."""

from __future__ import annotations

import json

import pytest
from clikit import cli

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/", "http://localhost:9/x", "http://[::1]:9/",
                                 "http://169.254.169.254/latest/meta-data"])
def test_a_refused_address_is_refused_before_it_is_asked_about(tmp_path, ws, isolated_home, url):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "web_fetch", "arguments": {"url": url}}]},
                                  {"text": "could not read it"}]))
    done = cli(["-C", str(ws), "-p", "read it", "--model", f"scripted:{script}", "--output", "json"],
               home=isolated_home)
    report = json.loads(done.stdout)
    assert done.returncode == 0 and report["status"] == "done", done.stdout  # not exit 3: nothing was asked
    (entry,) = report["tool_calls"]
    assert entry["ok"] is False and entry["errors"][0].startswith("refused: ") and "decided_by" not in entry

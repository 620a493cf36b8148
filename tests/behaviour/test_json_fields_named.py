"""Every field of `--output json`'s tool calls is named in the README's list of them."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from clikit import cli

README = Path(__file__).resolve().parents[2] / "README.md"


@pytest.mark.slow
def test_the_readme_names_every_field_of_a_tool_call(tmp_path, ws, isolated_home):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "a.txt", "content": "hi\n"}},
                        {"name": "edit_file", "arguments": {"path": "nope.txt", "old": "a", "new": "b"}}]},
        {"text": "ok"}]))
    done = cli(["-C", str(ws), "-p", "make a", "--model", f"scripted:{script}", "--yes", "--output", "json"],
               home=isolated_home)
    fields = {key for entry in json.loads(done.stdout)["tool_calls"] for key in entry}
    listed = re.search(r'"tool_calls": \[\{(.*?)\}\]', " ".join(README.read_text().split()))
    assert listed is not None
    named = set(re.findall(r'"(\w+)"', listed.group(1)))
    assert fields - named == set(), f"README's tool_calls list lacks {sorted(fields - named)}"

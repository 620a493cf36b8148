"""`w` ("always") at the question about a host no rule allows: the command reaches it, the host is added to the user
config's `[sandbox.network] allow` (the user's other lines kept), and a new session reaches it without asking."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from netkit import INDEX_HOST, IndexServer, pip_download, wheel_index
from termkit import PROMPT, Term

pytestmark = [pytest.mark.slow,
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the command sandbox is Linux-only")]

WHEEL = "tinypkg-1.0-py3-none-any.whl"


@pytest.fixture
def index(tmp_path: Path) -> Iterator[IndexServer]:
    server = IndexServer(wheel_index(tmp_path / "index"), INDEX_HOST)
    yield server
    server.close()


def _fetch(index: IndexServer) -> list[dict]:
    command = pip_download(index.port, "python3")
    return [{"tool_calls": [{"name": "run_command", "arguments": {"command": command}}]}, {"text": "fetched it"}]


def test_always_adds_the_host_to_the_user_config_and_a_new_session_does_not_ask(tmp_path: Path,
                                                                                  index: IndexServer) -> None:
    config = tmp_path / "home" / "config" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('# my settings\n[web]\nallow_private = false\n')
    t = Term(tmp_path, _fetch(index))
    t.say("fetch tinypkg")
    asked = t.expect(r"Run it\?")
    assert f"{INDEX_HOST}:{index.port}" in asked and "w always" in " ".join(asked.split()), asked
    t.child.send("w")
    said = t.expect("fetched it")
    assert WHEEL in said and "your user config" in " ".join(said.split()), said
    t.expect(PROMPT)
    assert t.quit() == 0
    rule = f"{INDEX_HOST}:{index.port}"
    kept = '# my settings\n[web]\nallow_private = false\n'
    assert config.read_text() == f'{kept}\n[sandbox.network]\nallow = ["{rule}"]\n'

    t2 = Term(tmp_path, _fetch(index))
    t2.say("fetch tinypkg")
    before = t2.expect("fetched it")
    t2.expect(PROMPT)
    assert "Run it?" not in before and WHEEL in before, before
    assert t2.quit() == 0

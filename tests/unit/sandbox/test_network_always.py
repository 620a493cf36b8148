""""Always" at the network question: the host goes to the user config's `[sandbox.network] allow`, the file's bytes
kept but for the rule added; a file written another way is left alone with one line saying what to add; a new
session reads the rule and allows the host without asking."""

from __future__ import annotations

import threading
import tomllib
from pathlib import Path

import pytest

from cli_agent.config import load_settings
from cli_agent.contracts import ConfigError
from cli_agent.sandbox import NetRules, SessionNet
from cli_agent.sandbox.network.allow_file import keep_host


@pytest.mark.parametrize(("before", "after"), [
    ("", '[sandbox.network]\nallow = ["pypi.org"]\n'),
    ('model = "x"  # mine\n', 'model = "x"  # mine\n\n[sandbox.network]\nallow = ["pypi.org"]\n'),
    ('[sandbox]\nenv_allow = ["A"]\n', '[sandbox]\nenv_allow = ["A"]\n\n[sandbox.network]\nallow = ["pypi.org"]\n'),
    ('[sandbox.network]  # rules\npresets = ["node"]\n\n[web]\nallow_private = true\n',
     '[sandbox.network]  # rules\nallow = ["pypi.org"]\npresets = ["node"]\n\n[web]\nallow_private = true\n'),
    ('[sandbox.network]\nallow = []\n', '[sandbox.network]\nallow = ["pypi.org"]\n'),
    ('[sandbox.network]\nallow = ["a.org", "b.org"]   # x\n[web]\n',
     '[sandbox.network]\nallow = ["a.org", "b.org", "pypi.org"]   # x\n[web]\n'),
    ('[sandbox.network]\nallow = [\n  "a.org",\n]\n', '[sandbox.network]\nallow = [\n  "a.org","pypi.org"\n]\n'),
    ('[sandbox.network]\nallow = ["pypi.org"]\n', '[sandbox.network]\nallow = ["pypi.org"]\n'),
])
def test_the_host_is_added_and_the_rest_of_the_file_kept_byte_for_byte(tmp_path: Path, before: str,
                                                                         after: str) -> None:
    path = tmp_path / "config.toml"
    if before:
        path.write_text(before)
    assert keep_host("pypi.org", path) == path
    assert path.read_text() == after
    tomllib.loads(path.read_text())


@pytest.mark.parametrize("before", [
    "[sandbox]\nnetwork = false\n",
    'sandbox.network.allow = ["a.org"]\n',
    '[sandbox]\nnetwork = { allow = ["a.org"] }\n',
    '[sandbox.network]\nallow = [\n  "a.org", # mine\n]\n',
    "not toml [",
])
def test_a_file_written_another_way_is_left_alone_with_one_line(tmp_path: Path, before: str) -> None:
    path = tmp_path / "config.toml"
    path.write_text(before)
    with pytest.raises(ConfigError) as raised:
        keep_host("pypi.org", path)
    assert "\n" not in str(raised.value) and str(path) in str(raised.value)
    assert path.read_text() == before


def _answered(net: SessionNet, grant: str) -> None:
    def answer() -> None:
        while True:
            for question in net.questions():
                question.answer(grant)
                return
    threading.Thread(target=answer, daemon=True).start()


def test_always_allows_now_writes_the_host_and_a_new_session_allows_it_unasked(tmp_path: Path,
                                                                                  monkeypatch: pytest.MonkeyPatch
                                                                                  ) -> None:
    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "ws").mkdir()
    net = SessionNet(NetRules())
    with net.asked_by():
        _answered(net, "always")
        allowed, why = net.decide("example.org", 443)
    assert allowed and '"example.org" added to [sandbox.network] allow' in why
    assert net.decide("example.org", 443)[0]  # for the rest of the session, unasked

    settings = load_settings({}, workspace=tmp_path / "ws").settings.sandbox.network
    assert not isinstance(settings, bool)
    fresh = SessionNet(NetRules(tuple(settings.allow), tuple(settings.presets)))
    assert fresh.decide("example.org", 443) == (True, "example.org")  # not asking: the rule allows it
    assert not fresh.decide("example.org", 8080)[0]

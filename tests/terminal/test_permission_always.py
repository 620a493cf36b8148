"""`w` ("always") at the approval question: the rule that would allow the like of the call is shown, then saved
where the user picks, and holds at once in the session and in the next one, which does not ask again."""

from __future__ import annotations

import pytest
from termkit import PROMPT, QUESTION, Term, create

from cli_agent.config import own_rules_file

pytestmark = pytest.mark.slow


def _turn(*calls: dict, text: str) -> list[dict]:
    return [{"tool_calls": list(calls)}, {"text": text}]


def test_always_writes_the_rule_for_this_project_and_the_next_session_does_not_ask(tmp_path, monkeypatch):
    t = Term(tmp_path, [*_turn(create("src/a.py"), text="made a"), *_turn(create("src/b.py"), text="made b")])
    t.say("make a")
    t.expect(QUESTION)
    t.child.send("w")
    shown = t.expect(r"Save the rule\?")
    assert "the rule:" in shown and 'paths = ["src/**"]' in shown and 'decision = "allow"' in shown, shown
    assert "your rules for this project" in shown, shown
    t.child.send("p")
    said = t.expect("made a")
    assert "written to your rules for this project" in " ".join(said.split()), said
    t.expect(PROMPT)
    t.say("make b")  # the rule holds at once: no question
    before = t.expect("made b")
    assert "Apply?" not in before, before
    t.expect(PROMPT)
    assert t.quit() == 0
    assert (t.ws / "src" / "a.py").exists() and (t.ws / "src" / "b.py").exists()

    monkeypatch.setenv("CLI_AGENT_HOME", str(t.home))
    kept = own_rules_file(t.ws)
    assert kept.is_relative_to(t.home / "state") and 'paths = ["src/**"]' in kept.read_text()
    assert [p.name for p in t.ws.rglob("*") if p.is_file()] == ["a.py", "b.py"] or \
        sorted(p.name for p in (t.ws / "src").iterdir()) == ["a.py", "b.py"]

    t2 = Term(tmp_path, _turn(create("src/c.py"), text="made c"))
    t2.say("make c")
    before = t2.expect("made c")
    t2.expect(PROMPT)
    assert "Apply?" not in before, before
    assert t2.quit() == 0
    assert any(r.get("rule", "").startswith("allowed by rule allow create_file src/**") for r in t2.traces()
               if r.get("type") == "approval_decided")
    assert (t2.ws / "src" / "c.py").exists()


def test_always_to_the_user_config_and_a_change_elsewhere_is_still_asked(tmp_path):
    t = Term(tmp_path, [*_turn(create("src/a.py"), text="made a"), *_turn(create("docs/x.md"), text="made x")])
    t.say("make a")
    t.expect(QUESTION)
    t.child.send("w")
    t.expect(r"Save the rule\?")
    t.child.send("u")
    t.expect("made a")
    t.expect(PROMPT)
    t.say("make x")
    t.expect(QUESTION)  # outside src/: the rule does not reach it
    t.child.send("y")
    t.expect("made x")
    t.expect(PROMPT)
    assert t.quit() == 0
    config = (t.home / "config" / "config.toml").read_text()
    assert "[[permissions]]" in config and 'paths = ["src/**"]' in config, config

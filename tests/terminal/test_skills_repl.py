"""Skills in the REPL, in a pseudo-terminal: `/NAME REQUEST` runs the skill's instructions as a turn, `/skills`
lists them, and a workflow of the same name keeps `/NAME` with a note."""

from __future__ import annotations

import json

import pytest
from termkit import PROMPT, Term

pytestmark = pytest.mark.slow


def test_slash_name_runs_a_skill_and_a_workflow_keeps_its_name(tmp_path):
    ws = tmp_path / "ws"
    for name, body in (("release", "Bump the version in RELEASE-NOTES first."), ("explain", "Answer in French.")):
        (ws / ".agents" / "skills" / name).mkdir(parents=True)
        (ws / ".agents" / "skills" / name / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n")
    record = tmp_path / "requests.jsonl"
    t = Term(tmp_path, {"replies": [{"text": "released it"}], "record": str(record)},  # type: ignore[arg-type]
             env={"CLI_AGENT_TRUST": "1"}, cols=120)
    t.say("/skills")
    t.expect(r"/release\s+The release skill\.")
    listed = " ".join(t.expect(PROMPT).split())
    assert "from .agents/skills: " in listed
    assert "/explain runs the workflow explain; the skill of the same name is left out" in listed
    t.say("/release 2.0")
    t.expect("released it")
    t.expect(PROMPT)
    assert t.quit() == 0
    asked = json.loads(record.read_text().splitlines()[-1])[-1]["content"]
    assert "Use the skill release" in asked and "RELEASE-NOTES" in asked and "The user's request: 2.0" in asked

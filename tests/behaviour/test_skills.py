"""Agent Skills and the project's instruction files through the real CLI with the scripted model: SKILL.md folders
from the four places, the `skill` tool, `-p "/NAME"`, `cli-agent skills`, nested AGENTS.md (else CLAUDE.md or
GEMINI.md) and the bound across the files."""

from __future__ import annotations

import json

import pytest

from cli_agent.cli.main import run
from cli_agent.providers.scripted import ScriptedProvider

pytestmark = pytest.mark.usefixtures("isolated_home")


class Factory:
    def __init__(self, *replies):
        self.provider = ScriptedProvider(list(replies))

    def __call__(self, settings):
        return self.provider

    @property
    def requests(self):
        return self.provider.requests


def call(tool, **arguments):
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


def skill(folder, name, description, body="Do it the team's way.\n"):
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{body}")


@pytest.fixture
def ws(tmp_path, monkeypatch):
    root, home = tmp_path / "ws", tmp_path / "home"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("x = 1\n")
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CLI_AGENT_TRUST", "1")
    monkeypatch.chdir(root)
    skill(root / ".agents/skills/release", "release", "Cut a release of this project.",
          "Bump the version in RELEASE-NOTES first.\n")
    (root / ".agents/skills/release/scripts").mkdir()
    (root / ".agents/skills/release/scripts/bump.sh").write_text("echo bump\n")
    skill(root / ".claude/skills/lint-fix", "lint-fix", "Fix lint errors.")
    skill(home / ".agents/skills/deploy", "deploy", "Deploy to staging.")
    skill(home / ".claude/skills/changelog", "changelog", "Write the changelog entry.")
    return root


def system_of(request):
    return request.messages[0].content


def test_descriptions_in_the_prompt_and_the_body_only_after_skill(ws, capsys):
    factory = Factory(call("skill", name="release"), {"text": "done"})
    assert run(["-p", "make a release", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    first, second = factory.requests
    system = system_of(first)
    for name, description in [("release", "Cut a release of this project."), ("lint-fix", "Fix lint errors."),
                              ("deploy", "Deploy to staging."), ("changelog", "Write the changelog entry.")]:
        assert f"- {name}: {description}" in system  # all four places
    assert "RELEASE-NOTES" not in json.dumps([m.to_dict() for m in first.messages])
    result = json.loads(second.messages[-1].content)["data"]
    assert "Bump the version in RELEASE-NOTES first." in result["instructions"]
    assert result["files"] == [".agents/skills/release/scripts/bump.sh"]


def test_slash_name_runs_a_skill_headless(ws, capsys):
    factory = Factory({"text": "released"})
    assert run(["-p", "/release 2.0", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    asked = factory.requests[0].messages[-1].content
    assert "Use the skill release" in asked and "Bump the version in RELEASE-NOTES first." in asked
    assert "- .agents/skills/release/scripts/bump.sh" in asked and "The user's request: 2.0" in asked


def test_a_workflow_wins_over_a_skill_of_the_same_name(ws, capsys):
    skill(ws / ".agents/skills/explain", "explain", "Explain in French.", "Answer in French.\n")
    factory = Factory({"text": "It adds."})
    assert run(["-p", "/explain src/app.py", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    assert "Answer in French" not in factory.requests[0].messages[-1].content
    assert "/explain runs the workflow explain; the skill of the same name is left out" in capsys.readouterr().err


def test_a_slash_word_that_names_nothing_is_the_task_itself(ws, capsys):
    factory = Factory({"text": "ok"})
    assert run(["-p", "/nothing-here please", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    assert factory.requests[0].messages[-1].content == "/nothing-here please"


def test_a_malformed_skill_is_named_and_skipped(ws, capsys):
    (ws / ".claude/skills/broken").mkdir(parents=True)
    (ws / ".claude/skills/broken/SKILL.md").write_text("---\nname: Broken Name\ndescription: x\n---\n")
    assert run(["skills", "-C", str(ws)]) == 0
    out, err = capsys.readouterr()
    assert "release\n    Cut a release of this project.\n    from .agents/skills:" in out
    assert "deploy" in out and "from ~/.agents/skills" in out and "changelog" in out and "lint-fix" in out
    assert "skipped a malformed skill" in err and "broken/SKILL.md: has a bad name 'Broken Name'" in err
    factory = Factory({"text": "ok"})
    assert run(["-p", "hi", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    assert "- release:" in system_of(factory.requests[0])


def test_an_untrusted_folders_skills_are_said_so(ws, capsys, monkeypatch):
    monkeypatch.delenv("CLI_AGENT_TRUST")
    assert run(["skills", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "from .agents/skills (untrusted folder)" in out and "from ~/.agents/skills:" in out


def test_no_skill_no_tool(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("HOME", str(tmp_path))
    (tmp_path / "ws").mkdir()
    factory = Factory({"text": "ok"})
    assert run(["-p", "hi", "-C", str(tmp_path / "ws"), "--model", "scripted"], provider_factory=factory) == 0
    offered = {s["function"]["name"] for s in factory.requests[0].tools or ()}
    assert "skill" not in offered and "# Skills" not in system_of(factory.requests[0])


# -- instruction files ------------------------------------------------------------------------------------------------

def test_nested_agents_md_joins_the_result_of_a_read_once(ws, capsys):
    (ws / "AGENTS.md").write_text("Root rule.\n")
    (ws / "src" / "AGENTS.md").write_text("Src rule: no globals.\n")
    (ws / "src" / "b.py").write_text("y = 2\n")
    factory = Factory(call("read_file", path="src/app.py"), call("read_file", path="src/b.py"), {"text": "ok"})
    assert run(["-p", "look", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    system = system_of(factory.requests[0])
    assert "Root rule." in system and "no globals" not in system
    first = json.loads(factory.requests[1].messages[-1].content)["data"]
    assert first["instructions"].startswith("src/AGENTS.md") and "Src rule: no globals." in first["instructions"]
    assert "instructions" not in json.loads(factory.requests[2].messages[-1].content)["data"]  # once


def test_claude_md_stands_in_where_a_folder_has_no_agents_md(ws, capsys, monkeypatch):
    (ws / "CLAUDE.md").write_text("Claude's root rule.\n")
    (ws / "src" / "GEMINI.md").write_text("Gemini's src rule.\n")
    (ws / "src" / "CLAUDE.md").write_text("Claude's src rule.\n")
    monkeypatch.chdir(ws / "src")  # the user works in src/: its file is in the prompt from the start
    factory = Factory({"text": "ok"})
    assert run(["-p", "hi", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    system = system_of(factory.requests[0])
    assert "## CLAUDE.md\nClaude's root rule." in system and "## src/CLAUDE.md\nClaude's src rule." in system
    assert "Gemini" not in system
    assert run(["prompt", "-C", str(ws), "--model", "scripted"]) == 0
    assert "instruction files read: CLAUDE.md, src/CLAUDE.md" in capsys.readouterr().err


def test_the_bound_applies_across_the_files_and_says_what_was_cut(ws, capsys, monkeypatch):
    (ws / "AGENTS.md").write_text("R" * 10_000)
    (ws / "src" / "AGENTS.md").write_text("S" * 10_000)
    (ws / "src" / "deep").mkdir()
    (ws / "src" / "deep" / "AGENTS.md").write_text("D" * 100)
    monkeypatch.chdir(ws / "src" / "deep")
    factory = Factory({"text": "ok"})
    assert run(["-p", "hi", "-C", str(ws), "--model", "scripted"], provider_factory=factory) == 0
    system = system_of(factory.requests[0])
    assert "R" * 10_000 in system and "S" * 6_000 in system and "S" * 6_001 not in system and "DDD" not in system
    assert ("[instructions over 16,000 bytes: src/AGENTS.md cut after 6,000 of 10,000 bytes; src/deep/AGENTS.md "
            "left out]") in system

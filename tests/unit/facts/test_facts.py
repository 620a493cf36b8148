"""Project facts: the store, the model's propose_fact tool, the user's `cli-agent facts`, and what the prompt sees."""

from __future__ import annotations

import json
import tomllib
from itertools import count

import pytest

from cli_agent.cli.main import run
from cli_agent.contracts.errors import ConfigError, UsageError
from cli_agent.contracts.messages import ToolCall
from cli_agent.facts.store import FactStore
from cli_agent.fs.workspace import Workspace
from cli_agent.prompt.builder import PromptBuilder, PromptContext
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.handlers import handlers
from cli_agent.tools.registry import Registry

pytestmark = pytest.mark.usefixtures("isolated_home")



def store_at(root):
    ticks = count(1)
    return FactStore(root, clock=lambda: f"2025-01-01T00:00:{next(ticks):02d}Z")


def toml(path):
    return tomllib.loads(path.read_text(encoding="utf-8"))


# -- the store ---------------------------------------------------------------------------------------------------

def test_missing_files_are_empty_and_nothing_is_created_by_reading(ws):
    store = FactStore(ws)
    assert store.committed() == [] and store.pending() == [] and store.locks() == ()
    assert not (ws / ".cli-agent").exists()


def test_propose_commit_reject_round_trip(ws):
    store = store_at(ws)
    first = store.propose("Tests use\n  pytest.", "The user said so.")
    store.propose("Tabs, not spaces.", "PEP 8 is not followed here.")
    assert (first.id, first.text, first.proposed_by) == ("f1", "Tests use pytest.", "model")
    assert [p.id for p in store.pending()] == ["f1", "f2"] and store.committed() == []
    draft = toml(ws / ".cli-agent" / "facts.draft.toml")
    assert draft["proposals"][0] == {"id": "f1", "text": "Tests use pytest.", "reason": "The user said so.",
                                     "time": "2025-01-01T00:00:01Z", "proposed_by": "model"}

    fact = store.commit("f1", author="alice")
    assert (fact.id, fact.text, fact.author) == ("f1", "Tests use pytest.", "alice")
    assert [f.text for f in store.committed()] == ["Tests use pytest."]
    assert [p.id for p in store.pending()] == ["f2"]
    assert toml(ws / ".cli-agent" / "facts.toml")["facts"][0]["author"] == "alice"

    assert store.reject("2").id == "f2"  # a bare number names f2 too
    assert store.pending() == [] and len(store.committed()) == 1
    assert store.propose("Another one.", "why").id == "f3"  # ids are never reused
    leftovers = [p.name for p in (ws / ".cli-agent").iterdir() if p.name.startswith(".cli-agent-tmp-")]
    assert leftovers == []


def test_unknown_id_names_the_pending_ones(ws):
    store = store_at(ws)
    with pytest.raises(UsageError, match="no proposals are pending"):
        store.commit("f1")
    store.propose("A fact.", "why")
    with pytest.raises(UsageError, match=r"'f9' \(pending: f1\)"):
        store.reject("f9")


def test_the_same_proposal_twice_keeps_one(ws):
    store = store_at(ws)
    assert store.propose("Use tabs.", "a").id == store.propose("use  TABS.", "b").id == "f1"
    assert len(store.pending()) == 1
    store.commit("f1")
    again = store.propose("Use tabs.", "c")
    assert (again.id, again.proposed_by) == ("f1", "committed") and store.pending() == []


def test_bad_proposals_are_refused(ws):
    store = store_at(ws)
    with pytest.raises(UsageError, match="empty"):
        store.propose("   \n", "why")
    with pytest.raises(UsageError, match="characters long"):
        store.propose("x" * 5000, "why")


def test_commit_appends_to_a_hand_written_file_keeping_its_comments(ws):
    (ws / ".cli-agent").mkdir()
    path = ws / ".cli-agent" / "facts.toml"
    path.write_text("# my notes\n[locks]\npaths = ['docs/**']  # never touch docs\n\n[[facts]]\ntext = 'Hand made.'")
    store = store_at(ws)
    store.propose("Use tabs.", "why")
    store.commit("f1", author="bob")
    text = path.read_text()
    assert text.startswith("# my notes\n") and "# never touch docs" in text
    assert [f.text for f in store.committed()] == ["Hand made.", "Use tabs."]
    assert store.committed()[0].id == "1" and store.locks() == ("docs/**",)


def test_commit_rewrites_a_file_it_cannot_append_to(ws):
    (ws / ".cli-agent").mkdir()
    path = ws / ".cli-agent" / "facts.toml"
    path.write_text('facts = [{text = "Inline."}]\n')
    store = store_at(ws)
    store.propose("Use tabs.", "why")
    store.commit("f1")
    assert [f.text for f in store.committed()] == ["Inline.", "Use tabs."]


@pytest.mark.parametrize(("content", "expected"), [
    ("[[facts]]\ntext = 'a'\n\n[[facts]\n", ":4: invalid TOML: "),
    ("[lock]\npaths = ['x']\n", ":1: lock: unknown key (did you mean 'locks'?)"),
    ("[[facts]]\ntext = 'a'\n\n[[facts]]\nauthor = 'me'\n", ":4: facts[1].text: missing required key"),
    ("[locks]\npaths = 'docs/**'\n", ":2: locks.paths: expected an array, found string 'docs/**'"),
    (b"\xff\xfe", "not UTF-8"),
])
def test_a_broken_facts_file_is_a_one_line_config_error(ws, content, expected):
    (ws / ".cli-agent").mkdir()
    path = ws / ".cli-agent" / "facts.toml"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    with pytest.raises(ConfigError) as info:
        FactStore(ws).committed()
    assert str(path) in str(info.value) and expected in str(info.value) and "\n" not in str(info.value)


def test_a_broken_facts_file_ends_a_run_with_exit_2_before_any_request(ws, capsys):
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "facts.toml").write_text("[[facts]\n")
    provider = ScriptedProvider([{"text": "never"}])
    assert run(["-C", str(ws), "-p", "hi", "--model", "x"], provider_factory=lambda s: provider) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "facts.toml:1: invalid TOML" in err[0]
    assert provider.requests == []


# -- the model's side: propose only ---------------------------------------------------------------------------------

def test_propose_fact_writes_the_draft_without_approval_although_cli_agent_is_protected(ws):
    workspace = Workspace(ws)
    dispatcher = Dispatcher(Registry.builtin(), ToolContext(workspace))
    envelope = dispatcher.run(ToolCall("c1", "propose_fact", {"text": "Use tabs.", "reason": "the user said"}))
    assert envelope.ok and envelope.data["id"] == "f1" and envelope.data["status"] == "pending"
    assert "not a project fact until the user commits" in envelope.data["message"]
    assert [p.text for p in FactStore(ws).pending()] == ["Use tabs."] and FactStore(ws).committed() == []
    assert not Registry.builtin().get("propose_fact").requires_approval
    refused = dispatcher.run(ToolCall("c2", "create_file", {"path": ".cli-agent/facts.toml",
                                                           "content": "[[facts]]\ntext = 'mine'\n"}))
    assert not refused.ok and "protected" in refused.errors[0]


def test_committing_is_never_a_model_tool():
    registry = Registry.builtin()
    every = registry.model_tools("remember this fact and commit it, confirm the facts", only=None)
    names = {t.name for t in every} | set(Dispatcher(registry, None).allowed) | set(handlers())  # type: ignore[arg-type]
    assert "propose_fact" in names
    assert not [n for n in names if "commit" in n.lower() or "reject" in n.lower() or "confirm" in n.lower()]
    built = PromptBuilder(registry).build(PromptContext(task="remember: commit the facts", facts=("A fact.",)))
    schema_names = [s["function"]["name"] for s in built.schemas]
    assert "propose_fact" in schema_names and not [n for n in schema_names if "commit" in n]
    assert "commit_fact" not in built.system and "facts commit" not in built.system
    assert "facts.commit" not in built.system and "FactStore" not in built.system
    assert FactStore.commit not in handlers().values()
    unknown = Dispatcher(registry, None).prepare(ToolCall("c", "commit_fact", {"id": "f1"}))  # type: ignore[arg-type]
    assert unknown.error is not None and "unknown tool" in unknown.error.errors[0]


def test_a_proposal_is_pending_and_stays_out_of_the_prompt_until_committed(ws, capsys):
    task = "Remember: we use tabs."
    first = ScriptedProvider([
        {"tool_calls": [{"name": "propose_fact", "arguments": {"text": "Indent with tabs.",
                                                               "reason": "The user said so."}}]},
        {"text": "Proposed."}])
    assert run(["-C", str(ws), "-p", task, "--model", "x"], provider_factory=lambda s: first) == 0
    assert "propose_fact" in [t["function"]["name"] for t in first.requests[0].tools]
    tool_message = first.requests[1].messages[-1]
    assert json.loads(tool_message.content)["data"]["id"] == "f1"
    assert [p.text for p in FactStore(ws).pending()] == ["Indent with tabs."]

    second = ScriptedProvider([{"text": "ok"}])
    assert run(["-C", str(ws), "-p", task, "--model", "x"], provider_factory=lambda s: second) == 0
    system = second.requests[0].messages[0].content
    assert "Indent with tabs." not in system and "Project facts (authoritative)" not in system

    capsys.readouterr()
    assert run(["facts", "commit", "f1", "-C", str(ws), "--author", "me"]) == 0
    assert "committed f1: Indent with tabs." in capsys.readouterr().out
    third = ScriptedProvider([{"text": "ok"}])
    assert run(["-C", str(ws), "-p", task, "--model", "x"], provider_factory=lambda s: third) == 0
    system = third.requests[0].messages[0].content
    section = system.split("# Project facts (authoritative)\n", 1)[1]
    assert "confirmed by the user" in section and "- Indent with tabs." in section


# -- the user's side: cli-agent facts -----------------------------------------------------------------------------

def test_facts_command_lists_commits_and_rejects(ws, capsys):
    store = store_at(ws)
    store.propose("Use tabs.", "the user said")
    store.propose("Python 3.11 only.", "pyproject")
    assert run(["facts", "-C", str(ws)]) == 0
    out = capsys.readouterr().out
    assert "f1  Use tabs." in out and "reason: the user said" in out and "Committed facts" in out
    assert run(["facts", "-C", str(ws), "commit", "f2"]) == 0  # the group's -C holds for the command
    assert run(["facts", "reject", "f1", "-C", str(ws)]) == 0
    capsys.readouterr()
    assert run(["facts", "list", "--json", "-C", str(ws)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [f["text"] for f in data["committed"]] == ["Python 3.11 only."] and data["pending"] == []
    assert data["locks"] == []


def test_facts_commit_of_an_unknown_id_exits_2_with_the_pending_ids(ws, capsys):
    store_at(ws).propose("Use tabs.", "why")
    assert run(["facts", "commit", "f7", "-C", str(ws)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "f7" in err[0] and "pending: f1" in err[0]
    assert [p.id for p in FactStore(ws).pending()] == ["f1"]


def test_an_unknown_id_creates_nothing(ws):
    with pytest.raises(UsageError):
        FactStore(ws).commit("f1")
    with pytest.raises(UsageError):
        FactStore(ws).reject("f1")
    assert not (ws / ".cli-agent").exists()


def test_the_store_refuses_a_linked_cli_agent_folder(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (ws / ".cli-agent").symlink_to(outside)
    with pytest.raises(ConfigError, match="can't be opened as a folder"):
        FactStore(ws).propose("A fact.", "why")
    assert list(outside.iterdir()) == []

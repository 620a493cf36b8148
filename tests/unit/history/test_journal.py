"""The undo journal: before-images on disk before any write, byte-for-byte undo with modes, refusals, git left alone."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
from collections.abc import Mapping
from pathlib import Path

import pytest

from cli_agent.contracts import errors
from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.history import journal
from cli_agent.history.journal import Journal, collect_blobs
from cli_agent.history.undo import render_turns, undo_turn
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files


class Agentish:
    """The tools, a Workspace whose before_write is the journal's hook, and one `turn()` per agent run."""

    def __init__(self, root: Path, home: Path) -> None:
        self.journal = Journal(root, home=home)
        self.ws = Workspace(root, before_write=self.journal.record)
        self.ctx = ToolContext(self.ws)

    def turn(self, *steps: tuple[str, Mapping[str, object]], session: str = "s1") -> None:
        self.journal.begin_turn(session)
        for tool, args in steps:
            self.ws.apply(getattr(files, tool)(self.ctx, **args))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    return tmp_path / "ws"


@pytest.fixture
def agent(root: Path, tmp_path: Path) -> Agentish:
    return Agentish(root, tmp_path / "state" / "journal")


def test_create_edit_write_delete_round_trip_byte_for_byte_with_modes(snapshot, root: Path, agent: Agentish) -> None:
    (root / "a.txt").write_bytes(b"\xef\xbb\xbfone\r\ntwo\r\nno final newline")
    os.chmod(root / "a.txt", 0o640)
    (root / "run.sh").write_bytes(b"#!/bin/sh\necho hi\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "gone.bin").write_bytes(bytes(range(256)) * 10)
    os.chmod(root / "gone.bin", 0o600)
    (root / "keep").mkdir()
    before = snapshot(root)
    agent.turn(("create_file", {"path": "n/m/new.txt", "content": "new\n"}),
               ("edit_file", {"path": "a.txt", "old": "two", "new": "2"}),
               ("write_file", {"path": "run.sh", "content": "#!/bin/sh\necho bye\n"}),
               ("delete_file", {"path": "gone.bin"}),
               ("create_file", {"path": "keep/x.txt", "content": "x"}))
    assert snapshot(root) != before
    done = undo_turn(agent.journal)
    assert done.turn == 1
    assert done.done == ("removed keep/x.txt", "recreated gone.bin", "restored run.sh", "restored a.txt",
                         "removed n/m/new.txt")
    assert snapshot(root) == before  # folders the turn made are gone, `keep` (there before) stays
    turn = agent.journal.turns()[0]
    assert turn.undone and [e.kind for e in turn.changes] == ["create", "edit", "write", "delete", "create"]


def test_several_changes_to_one_file_revert_newest_first(root: Path, agent: Agentish) -> None:
    (root / "f.txt").write_text("v1\n")
    agent.turn(("write_file", {"path": "f.txt", "content": "v2\n"}),
               ("edit_file", {"path": "f.txt", "old": "v2", "new": "v3"}),
               ("delete_file", {"path": "f.txt"}),
               ("create_file", {"path": "f.txt", "content": "v4\n"}))
    undo_turn(agent.journal)
    assert (root / "f.txt").read_text() == "v1\n"


def test_turns_are_numbered_and_undone_newest_first_or_by_number(root: Path, agent: Agentish) -> None:
    agent.turn(("create_file", {"path": "one.txt", "content": "1"}), session="aa")
    agent.turn(("create_file", {"path": "two.txt", "content": "2"}), session="bb")
    agent.turn(("create_file", {"path": "three.txt", "content": "3"}), session="bb")
    turns = agent.journal.turns()
    assert [(t.number, t.session, [e.path for e in t.changes]) for t in turns] == [
        (1, "aa", ["one.txt"]), (2, "bb", ["two.txt"]), (3, "bb", ["three.txt"])]
    assert undo_turn(agent.journal, turn=2).done == ("removed two.txt",)
    assert undo_turn(agent.journal).turn == 3  # the newest not undone
    assert undo_turn(agent.journal).turn == 1
    assert sorted(os.listdir(root)) == []
    with pytest.raises(errors.UsageError, match="nothing to undo"):
        undo_turn(agent.journal)
    with pytest.raises(errors.UsageError, match="turn 2 was undone already"):
        undo_turn(agent.journal, turn=2)
    with pytest.raises(errors.UsageError, match="turn 9 is not in the undo journal"):
        undo_turn(agent.journal, turn=9)


def test_a_turn_without_changes_takes_no_number(root: Path, agent: Agentish) -> None:
    agent.journal.begin_turn("s")
    agent.turn(("create_file", {"path": "a.txt", "content": "a"}))
    assert [t.number for t in agent.journal.turns()] == [1]


def test_undo_refuses_naming_the_file_when_it_changed_since_and_changes_nothing(snapshot, root: Path,
                                                                              agent: Agentish) -> None:
    (root / "a.txt").write_text("a\n")
    (root / "b.txt").write_text("b\n")
    agent.turn(("write_file", {"path": "a.txt", "content": "A\n"}),
               ("write_file", {"path": "b.txt", "content": "B\n"}),
               ("create_file", {"path": "c.txt", "content": "C\n"}))
    (root / "b.txt").write_text("the user's own work\n")
    after = snapshot(root)
    with pytest.raises(errors.CliAgentError, match=r"undo refused: b\.txt changed since the agent wrote it"):
        undo_turn(agent.journal)
    assert snapshot(root) == after  # a.txt and c.txt were not reverted either
    (root / "b.txt").write_text("B\n")  # the user puts back what the agent wrote
    os.unlink(root / "c.txt")  # and deletes the agent's new file: already as before the turn, so left alone
    assert undo_turn(agent.journal).done == ("restored b.txt", "restored a.txt")
    assert snapshot(root) == {"a.txt": (stat.S_IFREG, 0o644, b"a\n"), "b.txt": (stat.S_IFREG, 0o644, b"b\n")}


def test_a_change_whose_write_failed_is_skipped_by_undo(root: Path, agent: Agentish) -> None:
    """The entry is written before the change; if the write then fails the file is still the before-image."""
    (root / "a.txt").write_text("a\n")
    agent.journal.begin_turn("s")
    change = files.write_file(agent.ctx, "a.txt", "A\n")
    agent.journal.record(change)  # recorded, never applied (as if the process died right here)
    agent.ws.apply(files.create_file(agent.ctx, "b.txt", "b\n"))
    assert undo_turn(agent.journal).done == ("removed b.txt",)
    assert (root / "a.txt").read_text() == "a\n"


def test_the_entry_is_fsynced_on_disk_before_the_first_byte_is_written(root: Path, tmp_path: Path) -> None:
    (root / "a.txt").write_text("old\n")
    j = Journal(root, home=tmp_path / "j")
    seen: list[tuple[bytes, list[str]]] = []

    def hook(change: Change) -> None:
        j.record(change)
        lines = j.file.read_text().splitlines()
        seen.append(((root / "a.txt").read_bytes(), [json.loads(x)["type"] for x in lines]))

    ws = Workspace(root, before_write=hook)
    j.begin_turn("s")
    ws.apply(files.write_file(ToolContext(ws), "a.txt", "new\n"))
    assert seen == [(b"old\n", ["journal_header", "change"])]
    header = json.loads(j.file.read_text().splitlines()[0])
    assert header["format"] == 1 and header["workspace"] == str(root.resolve())
    assert [p.read_bytes() for p in (j.home / "blobs").glob("*/*")] == [b"old\n"]


def test_no_journal_entry_means_no_change_and_the_error_says_why(snapshot, root: Path, tmp_path: Path) -> None:
    (tmp_path / "not-a-folder").write_text("a file where the journal's folder should be")
    j = Journal(root, home=tmp_path / "not-a-folder" / "journal")
    ws = Workspace(root, before_write=j.record)
    ctx = ToolContext(ws)
    (root / "a.txt").write_text("a\n")
    with pytest.raises(ToolError, match=r"was not written: recording the change for undo failed .*Not a directory"):
        ws.apply(files.write_file(ctx, "a.txt", "A\n"))
    with pytest.raises(ToolError, match="recording the change for undo failed"):
        ws.apply(files.create_file(ctx, "d/new.txt", "n\n"))
    with pytest.raises(ToolError, match="recording the change for undo failed"):
        ws.apply(files.delete_file(ctx, "a.txt"))
    assert snapshot(root) == {"a.txt": (stat.S_IFREG, 0o644, b"a\n")}


def test_before_images_are_stored_once_per_content(root: Path, agent: Agentish) -> None:
    for name in ("a.txt", "b.txt", "c.txt"):
        (root / name).write_text("same content\n")
    agent.turn(*[("write_file", {"path": n, "content": "changed\n"}) for n in ("a.txt", "b.txt", "c.txt")])
    agent.turn(("write_file", {"path": "a.txt", "content": "same content\n"}))
    blobs = list((agent.journal.home / "blobs").glob("*/*"))
    assert sorted(b.read_bytes() for b in blobs) == [b"changed\n", b"same content\n"]
    assert all(stat.S_IMODE(b.stat().st_mode) == 0o600 for b in blobs)


def test_a_torn_last_line_is_skipped_and_the_next_entry_starts_a_new_line(root: Path, agent: Agentish) -> None:
    agent.turn(("create_file", {"path": "a.txt", "content": "a"}))
    with open(agent.journal.file, "ab") as fh:
        fh.write(b'{"type":"change","turn":2,"session":"x","seq":1,"tool":"wri')  # the process died here
    agent.turn(("create_file", {"path": "b.txt", "content": "b"}))
    assert [(t.number, [e.path for e in t.changes]) for t in agent.journal.turns()] == [(1, ["a.txt"]),
                                                                                       (2, ["b.txt"])]
    undo_turn(agent.journal)
    undo_turn(agent.journal)
    assert os.listdir(root) == []


def test_names_that_are_not_utf8_are_journaled_listed_and_undone(root: Path, agent: Agentish) -> None:
    (root / os.fsdecode(b"caf\xe9.txt")).write_bytes(b"latin\n")
    name = os.fsdecode(b"caf\xe9.txt")  # "caf\udce9.txt", as the model sees it
    agent.turn(("write_file", {"path": name, "content": "changed\n"}),
               ("create_file", {"path": os.fsdecode(b"n\xff/x.txt"), "content": "x\n"}))
    assert [e.path for e in agent.journal.turns()[0].changes] == [name, os.fsdecode(b"n\xff/x.txt")]
    assert "caf\\udce9.txt" in render_turns(agent.journal.turns())
    assert undo_turn(agent.journal).done == ("removed n\\udcff/x.txt", "restored caf\\udce9.txt")
    assert sorted(os.listdir(os.fsencode(root))) == [b"caf\xe9.txt"]
    assert (root / name).read_bytes() == b"latin\n"


def test_a_journal_cut_short_while_created_is_started_again(root: Path, agent: Agentish) -> None:
    agent.journal.dir.mkdir(parents=True)
    agent.journal.file.write_bytes(b'{"format": 1, "type": "jour')  # the process died writing the header
    assert agent.journal.turns() == []
    agent.turn(("create_file", {"path": "a.txt", "content": "a"}))
    assert [t.number for t in agent.journal.turns()] == [1]
    undo_turn(agent.journal)
    assert os.listdir(root) == []


def test_an_unknown_journal_format_is_refused(root: Path, agent: Agentish) -> None:
    agent.turn(("create_file", {"path": "a.txt", "content": "a"}))
    lines = agent.journal.file.read_text().splitlines()
    agent.journal.file.write_text(json.dumps(json.loads(lines[0]) | {"format": 99}) + "\n" + lines[1] + "\n")
    with pytest.raises(errors.CliAgentError, match="has format 99; this cli-agent reads format 1"):
        agent.journal.turns()
    agent.journal.begin_turn("s")
    with pytest.raises(ToolError, match="recording the change for undo failed"):
        agent.ws.apply(files.create_file(agent.ctx, "b.txt", "b"))
    assert os.listdir(root) == ["a.txt"]


def test_two_journals_on_one_workspace_never_share_a_turn(root: Path, tmp_path: Path) -> None:
    home = tmp_path / "j"
    one, two = Agentish(root, home), Agentish(root, home)
    one.journal.begin_turn("one")
    two.journal.begin_turn("two")
    one.ws.apply(files.create_file(one.ctx, "a.txt", "a"))
    two.ws.apply(files.create_file(two.ctx, "b.txt", "b"))
    one.ws.apply(files.create_file(one.ctx, "c.txt", "c"))
    assert [(t.number, t.session, [e.path for e in t.changes]) for t in one.journal.turns()] == [
        (1, "one", ["a.txt", "c.txt"]), (2, "two", ["b.txt"])]


def test_pruning_keeps_the_newest_turns_and_collects_unused_blobs(root: Path, agent: Agentish,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(journal, "KEEP_TURNS", 3)
    monkeypatch.setattr(journal, "PRUNE_EVERY", 4)
    (root / "f.txt").write_text("0\n")
    for n in range(1, 8):
        agent.turn(("write_file", {"path": "f.txt", "content": f"{n}\n"}))
    assert [t.number for t in agent.journal.turns()] == [2, 3, 4, 5, 6, 7]  # pruned to 2..4 at turn 4, then on
    removed = collect_blobs(agent.journal.home, grace_s=0)
    assert removed == 1  # "0\n", turn 1's before-image
    assert sorted(b.read_bytes() for b in (agent.journal.home / "blobs").glob("*/*")) == [
        f"{n}\n".encode() for n in range(1, 7)]
    for _ in range(6):
        undo_turn(agent.journal)
    assert (root / "f.txt").read_text() == "1\n"


def test_undo_is_held_to_the_workspace_even_with_a_tampered_journal(root: Path, agent: Agentish,
                                                                    tmp_path: Path) -> None:
    (tmp_path / "outside.txt").write_text("outside\n")
    (root / "a.txt").write_text("a\n")
    agent.turn(("write_file", {"path": "a.txt", "content": "A\n"}))
    lines = agent.journal.file.read_text().splitlines()
    for turn, (path, why) in enumerate((("../outside.txt", "climbs out"), ("/etc/hostname", "outside the workspace"),
                                        (str(tmp_path / "outside.txt"), "outside the workspace"),
                                        (".git/config", "protected"), (".GIT/hooks/x", "protected")), 7):
        entry = json.loads(lines[1]) | {"turn": turn, "path": path, "after": None, "kind": "delete"}
        with open(agent.journal.file, "a") as fh:
            fh.write(json.dumps(entry) + "\n")
        with pytest.raises(errors.CliAgentError, match=why):
            undo_turn(agent.journal, turn=turn)
    assert (tmp_path / "outside.txt").read_text() == "outside\n" and not (root / ".git").exists()
    os.unlink(root / "a.txt")  # the user replaced the agent's file by a link to an outside file
    os.symlink(tmp_path / "outside.txt", root / "a.txt")
    with pytest.raises(errors.CliAgentError, match=r"a\.txt can.t be read"):
        undo_turn(agent.journal, turn=1)
    assert (tmp_path / "outside.txt").read_text() == "outside\n" and (root / "a.txt").is_symlink()


def test_user_locks_do_not_stop_the_users_undo(root: Path, tmp_path: Path) -> None:
    agent = Agentish(root, tmp_path / "j")
    (root / "conf.toml").write_text("a = 1\n")
    agent.turn(("write_file", {"path": "conf.toml", "content": "a = 2\n"}))
    locked = Workspace(root, locks=("conf.toml",))
    with pytest.raises(ToolError, match="locked"):
        locked.check_writable("conf.toml")
    undo_turn(agent.journal)
    assert (root / "conf.toml").read_text() == "a = 1\n"


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_git_index_refs_and_untracked_files_are_untouched(snapshot, root: Path, agent: Agentish) -> None:
    def git(*args: str) -> str:
        env = os.environ | {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t", "GIT_CONFIG_GLOBAL": os.devnull}
        return subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True, text=True,
                              timeout=60).stdout

    git("init", "-q")
    (root / "tracked.txt").write_text("committed\n")
    (root / "staged.txt").write_text("committed\n")
    git("add", ".")
    git("commit", "-qm", "one")
    (root / "staged.txt").write_text("staged change\n")
    git("add", "staged.txt")
    (root / "staged.txt").write_text("staged change, then more in the work tree\n")
    (root / "untracked.txt").write_text("mine, not in git\n")
    status, tree = git("status", "--porcelain"), snapshot(root)
    agent.turn(("edit_file", {"path": "tracked.txt", "old": "committed", "new": "edited by the agent"}),
               ("edit_file", {"path": "staged.txt", "old": "more", "new": "less"}),
               ("create_file", {"path": "new/file.txt", "content": "n\n"}))
    with pytest.raises(ToolError, match="protected"):
        agent.ws.apply(files.create_file(agent.ctx, ".git/hooks/post-checkout", "evil"))
    undo_turn(agent.journal)
    assert snapshot(root) == tree  # .git (index, refs, objects) byte for byte, and every other file
    assert git("--no-optional-locks", "status", "--porcelain") == status


def test_a_recorded_session_journals_each_run_as_a_turn(root: Path, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from cli_agent.config.settings import Settings
    from cli_agent.contracts.events import Decision
    from cli_agent.providers.scripted import ScriptedProvider
    from cli_agent.session.session import drive, open_session

    monkeypatch.setenv("CLI_AGENT_HOME", str(tmp_path / "home"))
    provider = ScriptedProvider([
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "a.txt", "content": "a\n"}}]},
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "b.txt", "content": "b\n"}}]},
        {"text": "done"},
        {"tool_calls": [{"name": "edit_file", "arguments": {"path": "a.txt", "old": "a", "new": "A"}}]},
        {"text": "done"}])
    settings = Settings(model="scripted", workspace=str(root), trace=str(tmp_path / "t.jsonl"))
    session = open_session(settings, interactive=True, provider_factory=lambda s: provider)
    try:
        for prompt in ("make two files", "edit one"):
            drive(session.run(prompt, lambda asked: Decision.YES), session.trace)
    finally:
        session.close()
    assert session.journal is not None
    assert session.journal.home == tmp_path / "home" / "state" / "journal"
    turns = session.journal.turns()
    assert [(t.number, t.session, [e.path for e in t.changes]) for t in turns] == [
        (1, session.session_id, ["a.txt", "b.txt"]), (2, session.session_id, ["a.txt"])]
    undo_turn(session.journal)
    assert (root / "a.txt").read_text() == "a\n"

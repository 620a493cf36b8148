"""Adversarial links: symbolic links out (file, folder, dangling, chains, loops), hard links, a file swapped for a
link while it is being checked and opened (in a thread, many times), and a link left by an earlier step."""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.contracts.events import Decision, RunFinished, StopReason, ToolResult
from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.providers.scripted import ScriptedProvider
from cli_agent.session.session import drive
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.handlers import files
from cli_agent.tools.registry import Registry

SECRET = "SECRET-a91f outside the workspace"
RACE_SECONDS = float(os.environ.get("CLI_AGENT_RACE_SECONDS", "4"))


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "outdir").mkdir()
    (tmp_path / "sentinel.txt").write_text(SECRET + "\n")
    (tmp_path / "outdir" / "inner.txt").write_text(SECRET + "\n")
    return tmp_path


def outside(tree: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in tree.items() if not k.startswith("ws/") and k != "ws"}


def run_all(root: Path, path: str) -> list[tuple[str, bool, str]]:
    """Every tool on `path` through the dispatcher (plan + apply); (tool, ok, envelope JSON)."""
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root)))
    out = []
    for tool, args in (("read_file", {"path": path}), ("list_files", {"path": path}),
                       ("search", {"pattern": "SECRET", "path": path}),
                       ("edit_file", {"path": path, "old": "SECRET", "new": "pwned"}),
                       ("write_file", {"path": path, "content": "pwned\n"}),
                       ("create_file", {"path": path, "content": "pwned\n"}), ("delete_file", {"path": path})):
        envelope = d.execute(d.prepare(ToolCall("c", tool, args, json.dumps(args))))
        text = json.dumps(envelope.to_dict())
        assert SECRET not in text, (tool, path, text)
        out.append((tool, envelope.ok, text))
    return out


def run_all_writes(root: Path, path: str) -> list[tuple[str, bool, str]]:
    d = Dispatcher(Registry.builtin(), ToolContext(Workspace(root)))
    out = []
    for tool, args in (("edit_file", {"path": path, "old": "SECRET", "new": "pwned"}),
                       ("write_file", {"path": path, "content": "pwned\n"}), ("delete_file", {"path": path})):
        envelope = d.execute(d.prepare(ToolCall("c", tool, args, json.dumps(args))))
        out.append((tool, envelope.ok, json.dumps(envelope.to_dict())))
    return out


def writes_refused(results: list[tuple[str, bool, str]]) -> bool:
    return not any(ok for tool, ok, _ in results if tool in ("edit_file", "write_file", "create_file",
                                                              "delete_file"))


def test_a_file_link_out_is_not_read_edited_written_or_deleted(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    (ws / "link.txt").symlink_to(parent / "sentinel.txt")
    (ws / "rel.txt").symlink_to("../sentinel.txt")
    before = snapshot(parent)
    for path in ("link.txt", "rel.txt", "./link.txt", str(ws / "rel.txt")):
        results = run_all(ws, path)
        assert writes_refused(results) and not results[0][1], results
    assert snapshot(parent) == before  # the links themselves stay too


def test_a_folder_link_out_with_a_new_file_below(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    (ws / "out").symlink_to(parent / "outdir")
    before = snapshot(parent)
    for path in ("out/new.txt", "out/inner.txt", "out/deeper/new.txt", "out/../out/new.txt"):
        assert writes_refused(run_all(ws, path))
    assert snapshot(parent) == before


def test_a_dangling_link_out_is_never_created_through(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    (ws / "dangling.txt").symlink_to(parent / "created-outside.txt")
    (ws / "dangdir").symlink_to(parent / "made-outside")
    before = snapshot(parent)
    for path in ("dangling.txt", "dangdir/x.txt"):
        assert writes_refused(run_all(ws, path))
    assert snapshot(parent) == before
    assert not (parent / "created-outside.txt").exists() and not (parent / "made-outside").exists()


def test_link_chains_and_loops(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    (ws / "real.txt").write_text("inside\n")
    (ws / "in3").symlink_to("real.txt")
    (ws / "in2").symlink_to("in3")
    (ws / "in1").symlink_to("in2")
    (ws / "out3").symlink_to(parent / "sentinel.txt")
    (ws / "out2").symlink_to("out3")
    (ws / "out1").symlink_to("out2")
    (ws / "loop1").symlink_to("loop2")
    (ws / "loop2").symlink_to("loop1")
    (ws / "self").symlink_to("self")
    (ws / "dirloop").symlink_to(".")
    before = snapshot(parent)
    for path in ("out1", "loop1", "self", "loop1/x", "dirloop/" * 50 + "out1"):
        started = time.monotonic()
        assert writes_refused(run_all(ws, path)), path
        assert time.monotonic() - started < 30
    assert snapshot(parent) == before
    inside = Dispatcher(Registry.builtin(), ToolContext(Workspace(ws))).run(
        ToolCall("c", "read_file", {"path": "in1"}, "{}"))
    assert inside.ok and inside.data["content"] == "inside\n"


@pytest.mark.slow
def test_a_hard_link_to_an_outside_file_is_never_changed(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    os.link(parent / "sentinel.txt", ws / "hard.txt")
    before = outside(snapshot(parent))
    # reading is allowed: the user put the file in the workspace, and a hard link has no "outside" name
    read = Dispatcher(Registry.builtin(), ToolContext(Workspace(ws))).run(
        ToolCall("c", "read_file", {"path": "hard.txt"}, "{}"))
    assert read.ok
    (ws / "other.txt").write_text("x\n")
    results = run_all(ws, "other.txt")  # the secret never shows through another file
    results = run_all_writes(ws, "hard.txt")
    assert writes_refused(results)
    assert all("hard link" in text for tool, ok, text in results if tool in ("edit_file", "write_file",
                                                                             "delete_file"))
    assert outside(snapshot(parent)) == before and os.stat(parent / "sentinel.txt").st_nlink == 2


@pytest.mark.slow
def test_a_file_swapped_for_a_link_between_check_and_open(parent: Path) -> None:
    """A thread swaps `f.txt` between a regular file and a link out (and `d` between a folder and a link out)
    with atomic renames while reads, plans and writes run: nothing outside is ever read or written."""
    ws = parent / "ws"
    (ws / "f.txt").write_text("SAFE inside\n")
    (ws / "d").mkdir()
    stop = threading.Event()
    swaps = [0]
    raw = [0]

    def replace(name: str, tmp: Path) -> None:
        target = ws / name
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target)
        os.rename(tmp, target)  # atomic for a file or link; a folder needs the name free (the agent may race)

    def swapper() -> None:
        makers = (("f.txt", lambda p: p.symlink_to(parent / "sentinel.txt")),
                  ("f.txt", lambda p: p.write_text("SAFE inside\n")),
                  ("d", lambda p: p.symlink_to(parent / "outdir")),
                  ("d", lambda p: p.mkdir()))
        while not stop.is_set():
            for n, (name, make) in enumerate(makers):
                tmp = ws / f".swap{n}"
                try:
                    make(tmp)
                    if tmp.is_dir() and not tmp.is_symlink() and (ws / name).is_symlink():
                        os.unlink(ws / name)
                    replace(name, tmp)
                    swaps[0] += 1
                except OSError:
                    if tmp.is_dir() and not tmp.is_symlink():
                        shutil.rmtree(tmp, ignore_errors=True)
                    elif tmp.exists() or tmp.is_symlink():
                        tmp.unlink()

    workspace = Workspace(ws)
    ctx = ToolContext(workspace)
    thread = threading.Thread(target=swapper, daemon=True)
    thread.start()
    ops = writes = 0
    deadline = time.monotonic() + RACE_SECONDS
    try:
        while time.monotonic() < deadline:
            for attempt in (lambda: files.read_file(ctx, "f.txt"),
                            lambda: workspace.apply(files.write_file(ctx, "f.txt", "written by the agent\n")),
                            lambda: workspace.apply(files.edit_file(ctx, "f.txt", "SAFE", "EDITED")),
                            lambda: workspace.apply(files.create_file(ctx, "d/new.txt", "new\n")),
                            lambda: files.read_file(ctx, "d/inner.txt"),
                            lambda: workspace.apply(files.delete_file(ctx, "f.txt"))):
                ops += 1
                try:
                    result = attempt()
                except ToolError:
                    continue  # refused: never an escape
                except OSError:  # refused too, but untranslated (see the two tests below)
                    raw[0] += 1
                    continue
                assert SECRET not in json.dumps(result, default=str)
                if result is None:
                    writes += 1
                assert (parent / "sentinel.txt").read_text() == SECRET + "\n"
    finally:
        stop.set()
        thread.join(timeout=30)
    assert (parent / "sentinel.txt").read_text() == SECRET + "\n"
    assert sorted(os.listdir(parent / "outdir")) == ["inner.txt"]
    assert (parent / "outdir" / "inner.txt").read_text() == SECRET + "\n"
    assert swaps[0] > 50 and ops > 100
    print(f"FIGURE link swap race: {ops} operations ({writes} writes landed inside, {raw[0]} refused with a raw "
          f"OSError) against {swaps[0]} swaps")


def test_a_link_left_by_an_earlier_step_is_never_written_through(snapshot, parent: Path) -> None:
    """Step 1 creates build/out.txt; while the user looks at step 2's question something replaces build/ by a link
    out; step 2 (planned before) and step 3 (planned after) are both refused."""
    ws = parent / "ws"
    before = outside(snapshot(parent))
    provider = ScriptedProvider([
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "build/out.txt", "content": "1\n"}}]},
        {"tool_calls": [{"name": "write_file", "arguments": {"path": "build/out.txt", "content": "2\n"}}]},
        {"tool_calls": [{"name": "create_file", "arguments": {"path": "build/inner.txt", "content": "3\n"}}]},
        {"text": "done"}])
    asked = []

    def approve(question: object) -> Decision:
        asked.append(question)
        if len(asked) == 2:
            (ws / "build" / "out.txt").unlink()
            (ws / "build").rmdir()
            (ws / "build").symlink_to(parent / "outdir")
            (parent / "outdir" / "out.txt").write_text("1\n")  # same content as the agent's file: still refused
        return Decision.YES

    from agentkit import make_agent

    agent, _ = make_agent(ws, [], provider=provider, interactive=True, mode="ask")  # built as a session builds it
    events: list[object] = []
    finished = drive(agent.run("build", approve), events.append)
    # the model's last change failed and it answered anyway: not a success (exit 7)
    assert isinstance(finished, RunFinished) and finished.stop_reason is StopReason.CHANGE_FAILED
    results = [e for e in events if isinstance(e, ToolResult)]
    assert [r.envelope.ok for r in results] == [True, False, False]
    assert "symbolic link" in results[1].envelope.errors[0] or "read it again" in results[1].envelope.errors[0]
    assert (parent / "outdir" / "out.txt").read_text() == "1\n" and not (parent / "outdir" / "inner.txt").read_text() \
        .startswith("3")
    assert {k: v for k, v in outside(snapshot(parent)).items() if k != "outdir/out.txt"} == before


def test_a_link_swapped_for_a_file_during_resolution_is_a_tool_error(parent: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap race made deterministic: a link becomes a file between locate's lstat and its readlink."""
    ws = parent / "ws"
    (ws / "f.txt").symlink_to("real.txt")
    (ws / "real.txt").write_text("inside\n")
    real_readlink = os.readlink

    def swapped_just_before(path: str, *, dir_fd: int | None = None) -> str:  # the race, made deterministic
        os.unlink(ws / "f.txt")
        (ws / "f.txt").write_text("now a file\n")
        return real_readlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "readlink", swapped_just_before)
    with pytest.raises(ToolError):
        Workspace(ws).read_bytes("f.txt")


def test_a_file_swapped_for_a_link_just_before_open_is_a_tool_error(parent: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """The swap race made deterministic: a file becomes a link out between locate's lstat and the open."""
    import cli_agent.fs.workspace as sandbox

    ws = parent / "ws"
    (ws / "f.txt").write_text("inside\n")
    real_open_regular = sandbox.open_regular

    def swapped_just_before(loc: object, **kw: object) -> int:  # the race, made deterministic
        os.unlink(ws / "f.txt")
        (ws / "f.txt").symlink_to(parent / "sentinel.txt")
        return real_open_regular(loc, **kw)  # type: ignore[arg-type]

    monkeypatch.setattr(sandbox, "open_regular", swapped_just_before)
    with pytest.raises(ToolError):
        Workspace(ws).read_bytes("f.txt")
    assert (parent / "sentinel.txt").read_text() == SECRET + "\n"

"""Every path-traversal payload of shared/corpora/path_traversal through read_file and create_file (plan + apply).

The workspace sits in a parent folder holding a sentinel file; nothing outside the workspace may be read (its
content never comes back), created or changed.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from places import CORPORA

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files

CORPUS = CORPORA / "path_traversal"
SENTINEL = "sentinel.txt"
SECRET = "SENTINEL-7f3c9a content that must never be read\n"
SYSTEM_FILES = ("/etc/passwd", "/etc/hosts", "/etc/issue", "/etc/shadow")


def payloads() -> list[str]:
    if not CORPUS.is_dir():
        pytest.skip(f"the path traversal corpus is not at {CORPUS} (CI clones shared/ beside the repo)")
    out: list[str] = []
    for name in ("dotdotpwn.txt", "directory_traversal.txt"):
        out += (CORPUS / name).read_text(encoding="utf-8").splitlines()
    template = (CORPUS / "deep_traversal_template.txt").read_text(encoding="utf-8").splitlines()
    for target in (SENTINEL, "etc/passwd"):
        out += [line.replace("{FILE}", target) for line in template]
    return list(dict.fromkeys(p for p in out if p))


def snapshot(top: Path, skip: Path) -> dict[str, object]:
    """Type, mode and content of everything below `top` except `skip` (the workspace)."""
    out: dict[str, object] = {}
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames[:] = [d for d in dirnames if Path(dirpath, d) != skip]
        for name in dirnames + filenames:
            p = Path(dirpath, name)
            st = p.lstat()
            body = hashlib.sha256(p.read_bytes()).hexdigest() if stat.S_ISREG(st.st_mode) else None
            out[str(p.relative_to(top))] = (stat.S_IFMT(st.st_mode), stat.S_IMODE(st.st_mode), st.st_size, body)
    return out


def system_state(absolute: list[str]) -> dict[str, object]:
    """What the absolute payloads and a few system files point at: existence and content digest."""
    state: dict[str, object] = {}
    for p in {*absolute, *SYSTEM_FILES}:
        try:
            st = os.lstat(p)
        except (OSError, ValueError):
            state[p] = None
            continue
        state[p] = (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ino)
    return state


@pytest.fixture
def fast_tmp(tmp_path: Path) -> Iterator[Path]:
    """A folder on tmpfs when there is one (20,000 fsyncs on a disk take minutes), else `tmp_path`."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    top = Path(tempfile.mkdtemp(prefix="cli-agent-corpus-", dir=shm))
    try:
        yield top
    finally:
        shutil.rmtree(top)


def remove_created(root: Path, rel: str) -> None:
    """Remove the folders a create made on the way to `rel` once they are empty (the file itself is deleted)."""
    folder = (root / rel).parent
    while folder != root:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def test_traversal_corpus_reads_and_creates_nothing_outside(fast_tmp: Path) -> None:
    corpus = payloads()
    assert len(corpus) > 20_000
    tmp_path = fast_tmp / "top"
    parent = tmp_path / "parent"
    root = parent / "ws"
    root.mkdir(parents=True)
    (parent / SENTINEL).write_text(SECRET)
    (parent / "etc").mkdir()
    (parent / "etc" / "passwd").write_text(SECRET)
    ws = Workspace(root)
    ctx = ToolContext(ws)
    secrets = [SECRET.strip()] + [Path(p).read_text(errors="replace")[:40] for p in SYSTEM_FILES
                                  if os.access(p, os.R_OK) and Path(p).stat().st_size > 10]
    absolute = [p for p in corpus if p.startswith("/")]
    before = snapshot(tmp_path.parent, root), system_state(absolute)

    read_ok = created = 0
    for n, payload in enumerate(corpus):
        try:
            content = files.read_file(ctx, payload)["content"]
        except ToolError:
            pass
        else:
            read_ok += 1
            assert not any(s in content for s in secrets), payload
        try:
            change = files.create_file(ctx, payload, f"created for {payload!r}\n")
            ws.apply(change)
        except ToolError:
            continue
        created += 1
        assert (root / change.path).read_text() == f"created for {payload!r}\n", payload
        if n % 20 == 0:  # through the tools again: the payload now names the file just created, inside
            assert files.read_file(ctx, payload)["content"] == f"created for {payload!r}\n"
            ws.apply(files.delete_file(ctx, payload))
        else:
            (root / change.path).unlink()
        remove_created(root, change.path)  # each payload meets an empty workspace

    assert snapshot(tmp_path.parent, root) == before[0]
    assert system_state(absolute) == before[1]
    assert (parent / SENTINEL).read_text() == SECRET
    # the payloads that stay inside (literal `%2e%2e`, `..\\`, `..;`) were created: the loop did test something
    assert created > 20_000 and read_ok == 0
    assert list(root.iterdir()) == []

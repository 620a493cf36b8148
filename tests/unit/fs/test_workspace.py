"""The sandbox: path rules, links, special files, protected paths and locks, and `apply`'s guarantees."""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import socket
import stat
import subprocess
import sys
import textwrap
import unicodedata
from collections.abc import Iterator
from pathlib import Path

import pytest

from cli_agent.contracts.change import Change
from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.atomic import TEMP_PREFIX
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.handlers import files

SECRET = b"TOP SECRET outside the workspace\n"


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    (tmp_path / "ws").mkdir()
    (tmp_path / "sentinel.txt").write_bytes(SECRET)
    (tmp_path / "outdir").mkdir()
    (tmp_path / "outdir" / "inner.txt").write_bytes(SECRET)
    return tmp_path


@pytest.fixture
def ws(parent: Path) -> Workspace:
    return Workspace(parent / "ws")


@pytest.fixture
def ctx(ws: Workspace) -> ToolContext:
    return ToolContext(ws)


def outside(tree: dict[str, object]) -> dict[str, object]:
    return {k: v for k, v in tree.items() if not (k == "ws" or k.startswith("ws/"))}


@contextlib.contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Fail instead of hanging (a blocking open of a FIFO is interrupted by the alarm)."""
    def expire(signum: int, frame: object) -> None:
        raise TimeoutError("hung")

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def refused(fn: object, *args: object, match: str | None = None) -> ToolError:
    with pytest.raises(ToolError, match=match) as info:
        fn(*args)  # type: ignore[operator]
    return info.value


# -- path strings --------------------------------------------------------------------------------------------------

@pytest.mark.parametrize(("given", "expected"), [
    ("a/./b", "a/b"), ("a//b/", "a/b"), ("", "."), (".", "."), ("./", "."), ("a/..", "."), ("a/b/../c", "a/c"),
    ("..\\..\\etc\\passwd", "..\\..\\etc\\passwd"), ("%2e%2e/x", "%2e%2e/x"), ("...", "..."), ("~/x", "~/x"),
    ("a/../" * 1000 + "x", "x"), ("a/b/" * 500 + "../" * 1000 + "x", "x"),
])
def test_relative_normalises(ws: Workspace, given: str, expected: str) -> None:
    assert ws.relative(given) == expected


def test_absolute_inside_is_accepted_and_outside_refused(ws: Workspace, parent: Path) -> None:
    assert ws.relative(str(ws.root / "a" / "b.txt")) == "a/b.txt"
    assert ws.relative(str(ws.root)) == "."
    assert ws.relative(str(ws.root) + "/sub/../x") == "x"
    for bad in ("/etc/passwd", str(parent / "sentinel.txt"), str(ws.root) + "/../sentinel.txt", "/", "//etc/passwd"):
        refused(ws.relative, bad, match="outside the workspace")


def test_absolute_path_through_the_given_spelling_of_a_linked_root(parent: Path) -> None:
    (parent / "alias").symlink_to(parent / "ws")
    (parent / "ws" / "f.txt").write_text("hi\n")
    ws = Workspace(parent / "alias")
    assert ws.root == (parent / "ws").resolve()
    assert ws.read_bytes(str(parent / "alias" / "f.txt")) == b"hi\n"


@pytest.mark.parametrize("bad", [
    "../sentinel.txt", "a/../../sentinel.txt", "..", "../ws/x", "../" * 1000 + "sentinel.txt",
    "a/" * 3 + "../" * 4 + "sentinel.txt",
])
def test_climbing_out_is_refused(snapshot, ws: Workspace, ctx: ToolContext, parent: Path, bad: str) -> None:
    before = outside(snapshot(parent))
    refused(ws.relative, bad, match="climbs out")
    refused(files.read_file, ctx, bad)
    refused(files.create_file, ctx, bad, "x")
    assert outside(snapshot(parent)) == before


def test_sibling_prefix_folder_is_outside(parent: Path, ws: Workspace, ctx: ToolContext) -> None:
    evil = parent / "ws-evil"
    evil.mkdir()
    (evil / "loot.txt").write_bytes(SECRET)
    for p in (str(evil / "loot.txt"), str(evil / "new.txt")):
        refused(ws.relative, p, match="outside")
        refused(files.read_file, ctx, p)
        refused(files.create_file, ctx, p, "x")
    assert sorted(os.listdir(evil)) == ["loot.txt"]


def test_nul_and_long_names_are_refused(ws: Workspace, ctx: ToolContext) -> None:
    refused(ws.relative, "a\0b", match="NUL")
    refused(files.read_file, ctx, "ok.txt\0../../sentinel.txt", match="NUL")
    refused(files.create_file, ctx, "x\0", "y", match="NUL")
    refused(files.create_file, ctx, "n" * 256, "y", match="255")
    refused(files.create_file, ctx, "é" * 128, "y", match="255")  # 256 bytes in UTF-8
    refused(files.create_file, ctx, "/".join(["d" * 200] * 21), "y", match="4096")
    refused(ws.relative, "x" * 70_000, match="characters long")
    assert os.listdir(ws.root) == []


def test_empty_path_and_root_are_never_write_targets(ws: Workspace, ctx: ToolContext) -> None:
    for path in ("", "   ", ".", "./", str(ws.root), "a/.."):
        refused(ws.check_writable, path)
        refused(files.delete_file, ctx, path)
        refused(files.create_file, ctx, path, "x")
    refused(files.create_file, ctx, "newdir/", "x", match="ends with '/'")
    with pytest.raises(ToolError):
        ws.apply(Change(tool="delete_file", kind="delete", path=".", before=b"", after=None))


def test_backslash_is_a_literal_character(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    before = outside(snapshot(parent))
    ws.apply(files.create_file(ctx, "..\\..\\sentinel.txt", "inside\n"))
    assert (ws.root / "..\\..\\sentinel.txt").read_bytes() == b"inside\n"
    assert outside(snapshot(parent)) == before


# -- symbolic links ------------------------------------------------------------------------------------------------

@pytest.mark.slow
def test_file_link_out_is_neither_read_nor_written(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    (ws.root / "leak").symlink_to("../sentinel.txt")
    (ws.root / "leak_abs").symlink_to(parent / "sentinel.txt")
    before = outside(snapshot(parent))
    for name in ("leak", "leak_abs"):
        refused(files.read_file, ctx, name, match="outside the workspace")
        refused(files.edit_file, ctx, name, "TOP", "x")
        refused(files.write_file, ctx, name, "x")
        refused(files.delete_file, ctx, name)
        refused(files.create_file, ctx, name, "x")
        assert not ws.exists(name)
    result = files.search(ctx, "SECRET")
    assert result["matches"] == []
    assert outside(snapshot(parent)) == before
    assert (ws.root / "leak").is_symlink()


def test_dir_link_out_with_a_new_file_below(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    (ws.root / "out").symlink_to("../outdir")
    (ws.root / "out_abs").symlink_to(parent / "outdir")
    before = outside(snapshot(parent))
    for name in ("out", "out_abs"):
        refused(files.create_file, ctx, f"{name}/new.txt", "x", match="outside")
        refused(files.create_file, ctx, f"{name}/deeper/new.txt", "x", match="outside")
        refused(files.read_file, ctx, f"{name}/inner.txt", match="outside")
        refused(files.list_files, ctx, name)
    assert files.list_files(ctx)["entries"] == ["out", "out_abs"]  # listed, never entered
    assert outside(snapshot(parent)) == before


def test_dangling_link_out_is_not_created_through(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    (ws.root / "dangling").symlink_to("../created-outside.txt")
    (ws.root / "dangling_abs").symlink_to(parent / "created-outside-abs.txt")
    before = outside(snapshot(parent))
    for name in ("dangling", "dangling_abs"):
        refused(files.create_file, ctx, name, "x", match="outside")
        refused(files.write_file, ctx, name, "x")
        refused(files.read_file, ctx, name)
        refused(ws.apply, Change(tool="create_file", kind="create", path=name, before=None, after=b"x"))
    assert outside(snapshot(parent)) == before


def test_link_chains(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    (ws.root / "real.txt").write_text("real\n")
    (ws.root / "c").symlink_to("real.txt")
    (ws.root / "b").symlink_to("c")
    (ws.root / "a").symlink_to("b")
    assert files.read_file(ctx, "a")["content"] == "real\n"
    (ws.root / "sub").mkdir()
    (ws.root / "sub" / "hop").symlink_to("../a")
    assert files.read_file(ctx, "sub/hop")["content"] == "real\n"
    (ws.root / "z").symlink_to("sub/../y")
    (ws.root / "y").symlink_to("../sentinel.txt")  # a chain whose last hop leaves
    before = outside(snapshot(parent))
    refused(files.read_file, ctx, "z", match="outside")
    refused(files.create_file, ctx, "z", "x")
    assert outside(snapshot(parent)) == before


def test_link_loops_end_with_an_error(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "self").symlink_to("self")
    (ws.root / "ping").symlink_to("pong")
    (ws.root / "pong").symlink_to("ping")
    (ws.root / "d").mkdir()
    (ws.root / "d" / "up").symlink_to("..")  # a folder loop: walk must not follow it
    with deadline(10):
        for name in ("self", "ping", "pong/x"):
            refused(files.read_file, ctx, name, match="too many levels")
            refused(files.create_file, ctx, name, "x")
        entries = files.list_files(ctx)["entries"]
        assert "d/up" in entries and not any(e.startswith("d/up/") for e in entries)
        assert "ping" in files.list_files(ctx, "d/up/d/up", depth=1)["entries"]  # a link inside, followed once


def test_link_inside_pointing_inside(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "docs").mkdir()
    (ws.root / "README.md").write_text("hello\n")
    (ws.root / "docs" / "readme").symlink_to("../README.md")
    (ws.root / "abs").symlink_to(ws.root / "README.md")
    assert files.read_file(ctx, "docs/readme")["content"] == "hello\n"
    assert files.read_file(ctx, "abs")["content"] == "hello\n"
    change = files.edit_file(ctx, "docs/readme", "hello", "bye")
    assert change.path == "README.md"  # the change names the file it really changes
    ws.apply(change)
    assert (ws.root / "README.md").read_text() == "bye\n"
    assert (ws.root / "docs" / "readme").is_symlink()
    (ws.root / "lib").symlink_to("docs")
    ws.apply(files.create_file(ctx, "lib/new.md", "n\n"))
    assert (ws.root / "docs" / "new.md").read_text() == "n\n"


def test_link_to_a_protected_folder_is_protected(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("[core]\n")
    (ws.root / "gitlink").symlink_to(".git")
    (ws.root / "cfg").symlink_to(".git/config")
    refused(files.create_file, ctx, "gitlink/hooks-pre-commit", "x", match="protected")
    refused(files.edit_file, ctx, "cfg", "core", "evil", match="protected")
    assert files.read_file(ctx, "cfg")["content"] == "[core]\n"


def test_a_folder_swapped_for_a_link_after_planning_is_refused(snapshot, ws: Workspace, ctx: ToolContext,
                                                              parent: Path) -> None:
    (ws.root / "d").mkdir()
    change = files.create_file(ctx, "d/new.txt", "x")
    os.rmdir(ws.root / "d")
    (ws.root / "d").symlink_to("../outdir")
    before = outside(snapshot(parent))
    refused(ws.apply, change)
    assert outside(snapshot(parent)) == before


def test_a_file_swapped_for_a_link_after_planning_is_refused(snapshot, ws: Workspace, ctx: ToolContext,
                                                            parent: Path) -> None:
    (ws.root / "f.txt").write_bytes(SECRET)
    change = files.edit_file(ctx, "f.txt", "TOP", "NOT")
    (ws.root / "f.txt").unlink()
    (ws.root / "f.txt").symlink_to("../sentinel.txt")  # same bytes behind it
    before = outside(snapshot(parent))
    refused(ws.apply, change)
    assert outside(snapshot(parent)) == before


def test_a_replaced_workspace_root_is_refused(parent: Path) -> None:
    ws = Workspace(parent / "ws")
    os.rename(parent / "ws", parent / "ws-old")
    (parent / "ws").mkdir()
    refused(ws.read_bytes, "x", match="moved or replaced")


# -- hard links and special files ----------------------------------------------------------------------------------

def test_hard_link_to_an_outside_file_is_not_changed(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    os.link(parent / "sentinel.txt", ws.root / "hard.txt")
    before = outside(snapshot(parent))
    refused(files.edit_file, ctx, "hard.txt", "TOP", "x", match="hard links")
    refused(files.write_file, ctx, "hard.txt", "x", match="hard links")
    refused(files.delete_file, ctx, "hard.txt", match="hard links")
    forged = Change(tool="write_file", kind="write", path="hard.txt", before=SECRET, after=b"pwned\n")
    refused(ws.apply, forged, match="hard links")
    assert outside(snapshot(parent)) == before


@pytest.mark.slow
def test_fifo_is_refused_without_hanging(ws: Workspace, ctx: ToolContext) -> None:
    os.mkfifo(ws.root / "pipe")
    (ws.root / "pipe_link").symlink_to("pipe")
    (ws.root / "ok.txt").write_text("needle\n")
    with deadline(10):
        for name in ("pipe", "pipe_link"):
            refused(files.read_file, ctx, name, match="FIFO")
            refused(ws.read_bytes, name)
            refused(files.write_file, ctx, name, "x", match="regular")
            refused(files.edit_file, ctx, name, "a", "b")
            refused(files.delete_file, ctx, name)
        assert [m["path"] for m in files.search(ctx, "needle")["matches"]] == ["ok.txt"]
        assert "pipe" in files.list_files(ctx)["entries"]


def test_socket_is_refused(ws: Workspace, ctx: ToolContext) -> None:
    sock_path = ws.root / "s.sock"
    if len(os.fsencode(str(sock_path))) > 100:
        pytest.skip("socket path too long for AF_UNIX here")
    with socket.socket(socket.AF_UNIX) as s:
        s.bind(str(sock_path))
        refused(files.read_file, ctx, "s.sock", match="socket")


def test_dev_zero_through_a_link_and_device_nodes(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "zero").symlink_to("/dev/zero")
    with deadline(10):
        refused(files.read_file, ctx, "zero", match="outside")
        refused(files.write_file, ctx, "zero", "x")
        try:
            os.mknod(ws.root / "null", stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except OSError:
            return  # not allowed to make device nodes here: the link case above is the test
        refused(files.read_file, ctx, "null", match="character device")
        refused(files.write_file, ctx, "null", "x")


def test_folders_are_not_read_or_written_as_files(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "d").mkdir()
    (ws.root / "d" / "f.txt").write_text("x\n")
    err = refused(files.read_file, ctx, "d", match="folder")
    assert err.hints["files"] == ["d/f.txt"]
    refused(files.write_file, ctx, "d", "x", match="folder")
    refused(files.delete_file, ctx, "d", match="folder")
    refused(files.create_file, ctx, "d/f.txt/x", "y", match="not a folder")


# -- protected paths and locks -------------------------------------------------------------------------------------

@pytest.mark.parametrize("path", [
    ".git/config", ".GIT/config", ".Git/HEAD", ".git", "sub/.git/x", ".cli-agent/config.toml", ".Cli-Agent/x",
    ".CLI-AGENT", "a/../.git/hooks/pre-commit", "./.git/new-file",
])
def test_protected_paths_refuse_writes_even_when_missing(ws: Workspace, ctx: ToolContext, path: str) -> None:
    refused(ws.check_writable, path, match="protected")
    refused(files.create_file, ctx, path, "x", match="protected")
    assert not (ws.root / ".git").exists() and not (ws.root / ".cli-agent").exists()


def test_protected_files_can_be_read_but_not_changed(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / ".git").mkdir()
    (ws.root / ".git" / "config").write_text("[core]\n")
    assert files.read_file(ctx, ".git/config")["content"] == "[core]\n"
    refused(files.edit_file, ctx, ".git/config", "core", "x", match="protected")
    refused(files.delete_file, ctx, ".GIT/config", match="protected")
    forged = Change(tool="edit_file", kind="edit", path=".git/config", before=b"[core]\n", after=b"x")
    refused(ws.apply, forged, match="protected")
    assert (ws.root / ".git" / "config").read_text() == "[core]\n"


def test_locks_match_case_and_normalisation_variants(parent: Path) -> None:
    nfc = unicodedata.normalize("NFC", "café.txt")
    nfd = unicodedata.normalize("NFD", "café.txt")
    assert nfc != nfd
    ws = Workspace(parent / "ws", locks=(nfc, "docs", "*.lock", "conf/*.toml"))
    ctx = ToolContext(ws)
    for path in (nfd, nfc, "CAFÉ.TXT", "docs/new.md", "Docs/a/b.md", "poetry.lock", "x/Cargo.LOCK",
                 "conf/app.toml"):
        refused(files.create_file, ctx, path, "x", match="locked")
    ws.apply(files.create_file(ctx, "conf/sub/app.toml", "ok\n"))  # `*` does not cross folders
    nfd_lock = Workspace(parent / "ws", locks=(nfd,))
    refused(nfd_lock.check_writable, nfc, match="locked")
    assert sorted(os.listdir(ws.root)) == ["conf"]


# -- apply ---------------------------------------------------------------------------------------------------------

def test_apply_refuses_a_file_changed_since_it_was_read(ws: Workspace, ctx: ToolContext) -> None:
    (ws.root / "f.txt").write_text("one\n")
    change = files.write_file(ctx, "f.txt", "two\n")
    (ws.root / "f.txt").write_text("changed by someone\n")
    refused(ws.apply, change, match="changed on disk since it was read; read it again")
    assert (ws.root / "f.txt").read_text() == "changed by someone\n"
    create = files.create_file(ctx, "g.txt", "mine\n")
    (ws.root / "g.txt").write_text("theirs\n")
    refused(ws.apply, create, match="changed on disk")
    assert (ws.root / "g.txt").read_text() == "theirs\n"
    delete = files.delete_file(ctx, "f.txt")
    (ws.root / "f.txt").write_text("again\n")
    refused(ws.apply, delete, match="changed on disk")
    assert (ws.root / "f.txt").read_text() == "again\n"


def test_before_write_hook_runs_first_and_can_stop_the_write(parent: Path) -> None:
    seen: list[tuple[str, bytes]] = []

    def journal(change: Change) -> None:
        seen.append((change.path, (parent / "ws" / change.path).read_bytes()))

    ws = Workspace(parent / "ws", before_write=journal)
    (ws.root / "f.txt").write_text("old\n")
    ws.apply(files.write_file(ToolContext(ws), "f.txt", "new\n"))
    assert seen == [("f.txt", b"old\n")]

    def broken(change: Change) -> None:
        raise OSError("journal disk full")

    ws = Workspace(parent / "ws", before_write=broken)
    change = files.write_file(ToolContext(ws), "f.txt", "newer\n")
    refused(ws.apply, change, match="journal disk full")
    assert (ws.root / "f.txt").read_text() == "new\n"
    refused(ws.apply, files.create_file(ToolContext(ws), "n/g.txt", "x"), match="not written")
    assert sorted(os.listdir(ws.root)) == ["f.txt"]


def test_apply_leaves_no_temp_file_and_sets_modes(ws: Workspace, ctx: ToolContext) -> None:
    ws.apply(files.create_file(ctx, "a/b/new.txt", "x\n"))
    assert stat.S_IMODE((ws.root / "a/b/new.txt").stat().st_mode) == 0o644
    (ws.root / "run.sh").write_text("echo hi\n")
    os.chmod(ws.root / "run.sh", 0o755)
    ws.apply(files.edit_file(ctx, "run.sh", "hi", "bye"))
    assert stat.S_IMODE((ws.root / "run.sh").stat().st_mode) == 0o755
    ws.apply(files.delete_file(ctx, "a/b/new.txt"))
    leftovers = [p for p in ws.root.rglob("*") if p.name.startswith(TEMP_PREFIX)]
    assert leftovers == [] and not (ws.root / "a/b/new.txt").exists()


_FSIZE_SCRIPT = textwrap.dedent("""
    import os, resource, signal, sys
    from cli_agent.fs.workspace import Workspace
    from cli_agent.tools import ToolContext
    from cli_agent.tools.handlers import files
    from cli_agent.contracts.envelope import ToolError
    ws = Workspace(sys.argv[1])
    change = files.write_file(ToolContext(ws), "big.txt", "y" * 200_000)
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, resource.RLIM_INFINITY))
    try:
        ws.apply(change)
    except ToolError as exc:
        print("refused:", exc.message)
    else:
        print("written")
""")


@pytest.mark.slow
def test_file_size_limit_mid_write_leaves_the_original(ws: Workspace) -> None:
    original = b"original content\n" * 100
    (ws.root / "big.txt").write_bytes(original)
    done = subprocess.run([sys.executable, "-c", _FSIZE_SCRIPT, str(ws.root)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("refused:") and "not written" in done.stdout, done.stdout
    assert (ws.root / "big.txt").read_bytes() == original
    assert os.listdir(ws.root) == ["big.txt"]


def test_nothing_outside_changes_across_a_full_session(snapshot, ws: Workspace, ctx: ToolContext, parent: Path) -> None:
    """A self-check of `outside()`: it does see a change outside (so the tests above can fail)."""
    before = outside(snapshot(parent))
    ws.apply(files.create_file(ctx, "x.txt", "x"))
    assert outside(snapshot(parent)) == before
    (parent / "sentinel.txt").write_bytes(b"changed")
    assert outside(snapshot(parent)) != before
    assert hashlib.sha256(SECRET).hexdigest() != hashlib.sha256(b"changed").hexdigest()


def test_a_link_swapped_during_resolution_is_a_tool_error(ws: Workspace, parent: Path,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    (ws.root / "real.txt").write_text("inside\n")
    (ws.root / "f.txt").symlink_to("real.txt")
    real_readlink = os.readlink

    def swapped_first(path: str, *, dir_fd: int | None = None) -> str:  # the race, made deterministic
        os.unlink(ws.root / "f.txt")
        (ws.root / "f.txt").write_text("now a file\n")
        return real_readlink(path, dir_fd=dir_fd)

    monkeypatch.setattr(os, "readlink", swapped_first)
    refused(ws.read_bytes, "f.txt", match="changed while being opened")


def test_a_file_swapped_for_a_link_just_before_open_is_a_tool_error(ws: Workspace, parent: Path,
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    (ws.root / "f.txt").write_text("inside\n")
    real_open = os.open

    def swapped_first(path: str, flags: int, *args: object, **kwargs: object) -> int:
        if path == "f.txt" and not flags & os.O_DIRECTORY:
            os.unlink(ws.root / "f.txt")
            (ws.root / "f.txt").symlink_to(parent / "sentinel.txt")
        return real_open(path, flags, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "open", swapped_first)
    err = refused(ws.read_bytes, "f.txt", match="changed while being opened")
    assert SECRET.decode() not in err.message


def test_a_refusals_hints_are_made_only_when_read_and_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "a.txt").write_text("x")
    ws = Workspace(tmp_path)
    made: list[str] = []
    listing = Workspace._listing

    def noted(self, folder):
        made.append(folder)
        return listing(self, folder)

    monkeypatch.setattr(Workspace, "_listing", noted)
    errors = []
    for path in ("../etc/passwd", "/etc/passwd", "missing.txt"):
        with pytest.raises(ToolError) as info:
            ws.open_fd(path)
        errors.append(info.value)
    assert made == []  # nothing walked for errors nobody reads
    assert [e.hints["files"] for e in errors] == [["a.txt"]] * 3 and errors[2].hints["nearest"] == ["a.txt"]
    assert errors[0].hints is errors[0].hints and made == [".", ".", "missing.txt"]

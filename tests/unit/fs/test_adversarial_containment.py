"""Adversarial containment: hostile paths through every file tool (plan and apply), nothing outside touched.

Each payload goes through the real dispatcher as the model would send it, for the three reading tools and the four
mutating ones (applied with no approval step: the sandbox alone must hold). The workspace sits in a parent folder
holding a secret file, a sibling folder `ws-evil` (a prefix of the workspace's name plus more) and a folder
outside; none of them may be read (the secret never appears in any envelope), created or changed.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path
from typing import Any

import pytest

from cli_agent.contracts.messages import ToolCall
from cli_agent.fs.workspace import Workspace
from cli_agent.tools import ToolContext
from cli_agent.tools.dispatch import Dispatcher
from cli_agent.tools.registry import Registry

SECRET = "SECRET-5d1e outside the workspace"
TOOLS = ("read_file", "list_files", "search", "create_file", "edit_file", "write_file", "delete_file")


@pytest.fixture
def parent(tmp_path: Path) -> Path:
    for folder in ("ws", "ws-evil", "outdir"):
        (tmp_path / folder).mkdir()
    (tmp_path / "sentinel.txt").write_text(SECRET + "\n")
    (tmp_path / "ws-evil" / "x").write_text(SECRET + "\n")
    (tmp_path / "outdir" / "inner.txt").write_text(SECRET + "\n")
    (tmp_path / "ws" / "in.txt").write_text("inside\n")
    return tmp_path


def dispatcher(root: Path, **kw: object) -> Dispatcher:
    return Dispatcher(Registry.builtin(), ToolContext(Workspace(root, **kw)))  # type: ignore[arg-type]


def arguments(tool: str, path: str) -> dict[str, Any]:
    return {"read_file": {"path": path}, "list_files": {"path": path}, "search": {"pattern": "SECRET", "path": path},
            "create_file": {"path": path, "content": "pwned"}, "edit_file": {"path": path, "old": "SECRET",
                                                                             "new": "pwned"},
            "write_file": {"path": path, "content": "pwned"}, "delete_file": {"path": path}}[tool]


def attack(d: Dispatcher, paths: list[str], tools: tuple[str, ...] = TOOLS) -> list[dict[str, Any]]:
    """Every (tool, path) through prepare + execute; the envelopes, none of which may show the secret."""
    out = []
    for path in paths:
        for tool in tools:
            args = arguments(tool, path)
            envelope = d.execute(d.prepare(ToolCall("c1", tool, args, json.dumps(args))))
            text = json.dumps(envelope.to_dict(), ensure_ascii=False)
            assert SECRET not in text, (tool, path, text)
            out.append({"tool": tool, "path": path, "ok": envelope.ok, "errors": envelope.errors})
    return out


def dotdot_payloads() -> list[str]:
    out = []
    for depth in (1, 2, 3, 4, 8, 16, 64, 256, 999, 1000):
        out += ["../" * depth + "sentinel.txt", "../" * depth + "etc/passwd", "/".join([".."] * depth),
                "a/" * depth + "../" * (depth + 1) + "sentinel.txt", "./" + "/".join(["..", "."] * depth) + "/outdir/x",
                "in.txt/" + "../" * (depth + 1) + "ws-evil/x"]
    out += ["..", "../", "..//sentinel.txt", ".../sentinel.txt", "..\\..\\sentinel.txt", "%2e%2e/sentinel.txt",
            "..%2fsentinel.txt", "..%c0%afsentinel.txt", "\uff0e\uff0e/sentinel.txt", "....//....//sentinel.txt"]
    return out


def test_dotdot_chains_up_to_1000_deep_never_leave(snapshot, parent: Path) -> None:
    before = snapshot(parent)
    paths = dotdot_payloads()
    results = attack(dispatcher(parent / "ws"), paths)
    climbing = [r for r in results if str(r["path"]).startswith("../") and str(r["path"]).endswith("sentinel.txt")]
    assert climbing and not any(r["ok"] for r in climbing)
    changed = {k: v for k, v in snapshot(parent).items() if before.get(k) != v}
    # names that are only odd spellings (`...`, `%2e%2e`, fullwidth dots) are new files inside, never outside
    assert all(k.startswith("ws/") for k in changed), changed
    print(f"FIGURE containment dotdot: {len(paths)} payloads x {len(TOOLS)} tools = {len(results)} cases")


def test_absolute_paths_outside_and_inside(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    before = snapshot(parent)
    outside = [str(parent / "sentinel.txt"), str(parent / "outdir" / "inner.txt"), str(parent / "outdir"),
               str(parent / "outdir" / "new.txt"), "/etc/passwd", "/etc", "/", "//etc/passwd", "/tmp/new-file",
               str(ws) + "/../sentinel.txt", str(ws) + "/../ws-evil/x", str(parent), str(ws) + "-evil/x",
               str(ws) + "/..", str(ws) + "/../ws/../sentinel.txt",
               str(ws) + "-evil/new.txt", str(ws) + "/../../" + str(parent.name) + "/sentinel.txt"]
    results = attack(dispatcher(ws), outside)
    assert not any(r["ok"] for r in results), [r for r in results if r["ok"]]
    assert snapshot(parent) == before
    d = dispatcher(ws)
    inside = attack(d, [str(ws / "in.txt")], ("read_file", "write_file"))
    assert all(r["ok"] for r in inside) and (ws / "in.txt").read_text() == "pwned"
    assert attack(d, [str(ws / "sub" / "new.txt")], ("create_file",))[0]["ok"]
    print(f"FIGURE containment absolute: {len(outside) + 2} payloads, {len(results) + 3} cases")


def test_sibling_prefix_folder_is_outside(snapshot, parent: Path) -> None:
    before = snapshot(parent)
    ws = parent / "ws"
    paths = [str(parent / "ws-evil" / "x"), str(parent / "ws-evil" / "new"), "../ws-evil/x", "../ws-evil/new",
             str(parent / "ws-evil"), str(ws) + "-evil", "../ws/../ws-evil/x"]
    results = attack(dispatcher(ws), paths)
    assert not any(r["ok"] for r in results)
    assert snapshot(parent) == before


@pytest.mark.parametrize("path", ["", ".", "./", "/", "sub/..", "ws/..", "in.txt/..", "a/b/../..", "./.", "//",
                                  " ", "WS"])
def test_the_root_itself_is_never_a_write_or_delete_target(snapshot, parent: Path, path: str) -> None:
    ws = parent / "ws"
    (ws / "sub").mkdir()
    before = snapshot(parent)
    target = {"/": str(ws), "WS": str(ws) + "/sub/.."}.get(path, path)  # the root spelt absolutely
    results = attack(dispatcher(ws), [target], ("create_file", "write_file", "edit_file", "delete_file"))
    assert not any(r["ok"] for r in results), results
    assert snapshot(parent) == before


def test_nul_bytes_and_over_long_names_are_refused(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    before = snapshot(parent)
    paths = ["in.txt\0", "in.txt\0.png", "\0", "a\0/../../sentinel.txt", "x" * 256, "d/" + "y" * 300 + "/z",
             "a/" * 2100 + "f", "é" * 128, "../" * 20000 + "sentinel.txt", "\ud800.txt"]
    results = attack(dispatcher(ws), paths)
    assert not any(r["ok"] for r in results if r["tool"] not in ("list_files", "search")
                   or "\0" in str(r["path"])), results
    assert snapshot(parent) == before
    ok = attack(dispatcher(ws), ["n" * 255], ("create_file",))
    assert ok[0]["ok"] and (ws / ("n" * 255)).read_text() == "pwned"


def test_case_variants_of_protected_names_are_refused(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    (ws / ".git").mkdir()
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "facts.toml").write_text("[locks]\n")
    before = snapshot(parent)
    paths = [".git/config", ".GIT/config", ".Git/config", ".gIt/HEAD", ".git", ".GIT", ".git/hooks/pre-commit",
             "./.git/config", "sub/../.git/config", ".git/../.git/new", ".git/objects/ab/cd", ".CLI-AGENT/facts.toml",
             ".cli-agent/config.toml", ".Cli-Agent/workflows/evil.toml", "deep/.git/config", "deep/.GIT/new",
             str(ws / ".git" / "config"), str(ws / ".GIT" / "HEAD")]
    results = attack(dispatcher(ws), paths, ("create_file", "write_file", "edit_file", "delete_file"))
    assert not any(r["ok"] for r in results), [r for r in results if r["ok"]]
    assert all("protected" in " ".join(r["errors"]) for r in results if "/" in str(r["path"])
               and not str(r["path"]).endswith(("/.git", "/.GIT"))), results
    assert snapshot(parent) == before


def test_nfd_and_case_spellings_of_a_locked_name_are_refused(snapshot, parent: Path) -> None:
    ws = parent / "ws"
    nfc = unicodedata.normalize("NFC", "Café/menu.txt")
    nfd = unicodedata.normalize("NFD", nfc)
    assert nfc != nfd
    before = snapshot(parent)
    d = dispatcher(ws, locks=(nfc, "secrets/**"))
    paths = [nfc, nfd, nfc.upper(), nfd.lower(), "CAFÉ/MENU.TXT", "secrets/key", "SECRETS/key",
             unicodedata.normalize("NFD", "secrets/clé")]
    results = attack(d, paths, ("create_file", "write_file", "edit_file", "delete_file"))
    assert not any(r["ok"] for r in results)
    assert all("locked" in " ".join(r["errors"]) for r in results if r["tool"] == "create_file")  # type: ignore[arg-type]
    assert snapshot(parent) == before

"""Walking the workspace (`.git` skipped, `.gitignore` honoured, links never entered) and the glob syntax."""

from __future__ import annotations

from pathlib import Path

import pytest

from cli_agent.contracts.envelope import ToolError
from cli_agent.fs.pathmatch import GlobSet, IgnoreRules
from cli_agent.fs.workspace import Workspace


def make(root: Path, tree: dict[str, str]) -> Workspace:
    for rel, text in tree.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return Workspace(root)


def test_walk_skips_git_and_gitignored(tmp_path: Path) -> None:
    ws = make(tmp_path, {
        ".gitignore": "node_modules/\n*.pyc\n!keep.pyc\n/build\n# comment\n\nlogs/**/*.log\n",
        ".git/config": "", ".GIT/x": "",
        "node_modules/a/index.js": "", "src/node_modules/b.js": "",
        "src/a.py": "", "src/a.pyc": "", "src/keep.pyc": "",
        "build/out.o": "", "src/build/kept.txt": "",
        "logs/x/y.log": "", "logs/top.txt": "",
        "src/.gitignore": "generated.py\n", "src/generated.py": "", "generated.py": "",
    })
    assert ws.walk() == [
        ".gitignore", "generated.py", "logs/", "logs/top.txt", "logs/x/", "src/", "src/.gitignore", "src/a.py",
        "src/build/", "src/build/kept.txt", "src/keep.pyc",
    ]
    # rules of the folders above the start apply too
    assert ws.walk("src", pattern="*.py*") == ["src/a.py", "src/keep.pyc"]


def test_walk_depth_pattern_and_limit(tmp_path: Path) -> None:
    ws = make(tmp_path, {"a/b/c/d.txt": "", "a/x.md": "", "top.md": "", "a/b/y.md": ""})
    assert ws.walk(depth=1) == ["a/", "top.md"]
    assert ws.walk(depth=2) == ["a/", "a/b/", "a/x.md", "top.md"]
    assert ws.walk(pattern="*.md") == ["a/b/y.md", "a/x.md", "top.md"]
    assert ws.walk(pattern="a/**/*.txt") == ["a/b/c/d.txt"]
    assert ws.walk("a", pattern="b/*.md") == ["a/b/y.md"]
    assert len(ws.walk(limit=3)) == 3
    assert ws.walk(limit=2) == ["a/", "top.md"]  # shallow entries first
    assert ws.walk("top.md") == ["top.md"]
    with pytest.raises(ToolError):
        ws.walk(depth=0)


def test_walk_never_enters_linked_folders(tmp_path: Path) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_text("s")
    ws = make(tmp_path / "ws", {"real/f.txt": ""})
    (ws.root / "in_link").symlink_to("real")
    (ws.root / "out_link").symlink_to(tmp_path / "outside")
    assert ws.walk() == ["in_link", "out_link", "real/", "real/f.txt"]
    assert ws.walk("in_link") == ["real/f.txt"]  # an explicit link inside is followed to its target
    with pytest.raises(ToolError, match="outside"):
        ws.walk("out_link")


def test_nearest_hints(tmp_path: Path) -> None:
    ws = make(tmp_path, {"src/app/main.py": "", "src/app/models.py": "", "tests/test_main.py": ""})
    assert ws.nearest("src/app/mian.py")[0] == "src/app/main.py"
    assert ws.nearest("main.py")[0] == "src/app/main.py"
    assert ws.nearest("../../etc/passwd") == []
    assert ws.nearest("zzzzzz-qqqq") == []


@pytest.mark.parametrize(("glob", "path", "hit"), [
    (".git", ".git", True), (".git", ".git/objects/ab", True), (".git", "sub/.git/config", True),
    (".git", ".gitignore", False), (".git/**", ".git/a/b", True), ("*.lock", "a/b/Cargo.lock", True),
    ("src/*.py", "src/a.py", True), ("src/*.py", "src/sub/a.py", False), ("src/**/*.py", "src/sub/a.py", True),
    ("/docs", "docs/x.md", True), ("/docs", "a/docs/x.md", False), ("docs/", "a/docs/x.md", True),
    ("file[0-9].txt", "file7.txt", True), ("file[!0-9].txt", "file7.txt", False), ("a?c", "abc", True),
    ("a?c", "a/c", False), ("*", "anything/at/all", True), (".CLI-agent", ".cli-agent/config.toml", True),
])
def test_glob_table(glob: str, path: str, hit: bool) -> None:
    assert (GlobSet([glob], folded=True).match(path) == glob) is hit


def test_ignore_rules_last_match_wins_and_dir_only() -> None:
    rules = IgnoreRules().extended("", "*.log\n!important.log\ntmp/\n").extended("sub", "important.log\n")
    assert rules.ignored("a.log", False) and not rules.ignored("important.log", False)
    assert rules.ignored("sub/important.log", False)
    assert rules.ignored("x/tmp", True) and not rules.ignored("x/tmp", False)

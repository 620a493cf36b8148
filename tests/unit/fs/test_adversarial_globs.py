"""Adversarial globs: one matcher (`cli_agent.fs.pathmatch`) for list_files patterns, search globs, `.gitignore` and
locks; it agrees with `git check-ignore` over a corpus, skips what git skips, costs linear time on hostile
patterns, and refuses an invalid lock at load (exit 2) and an invalid pattern with a message to the model."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_agent.fs import pathmatch
from cli_agent.fs.pathmatch import Glob, GlobSet, IgnoreRules, glob_problem

pytestmark = pytest.mark.usefixtures("isolated_home")

PATHS_FILES = [
    "a", "b", "ab", "abc", "a.txt", "a.py", "b.py", "x.log", "important.log", ".hidden", "foo", "foo\\", "foo ",
    "a]b", "a[b", "a-b", "a^b", "a!b", "#x", "!x", "a b", "A.TXT", "z9", "Z", "-", "é",
    "src/a.py", "src/b.txt", "src/deep/x.py", "src/deep/er/y.py", "src/deep/er/z.txt",
    "doc/a.md", "doc/src/a.py", "build/out.o", "build/sub/out.o", "a/b/c/d.txt", "a/x/b/c.txt", "x/a/b", "q/abc/r",
    "logs/2024/x.log", "logs/keep.txt", "foo/bar", "bar/foo", "1/2/3/4/5/6/z",
]
PATHS_DIRS = ["src", "src/deep", "src/deep/er", "doc", "doc/src", "build", "build/sub", "a", "a/b", "a/b/c", "a/x",
              "a/x/b", "x", "x/a", "q", "q/abc", "logs", "logs/2024", "foo", "bar", "1", "1/2", "1/2/3", "1/2/3/4",
              "1/2/3/4/5", "1/2/3/4/5/6"]
PATTERNS = [
    "*", "a", "/a", "a/", "*.py", "/*.py", "src/*.py", "src/**", "src/**/*.py", "**/*.py", "**/deep", "**/deep/**",
    "**/er/*.txt", "a/**/b", "a/**/c", "**/a/**/b", "doc/**/a.py", "*/a.py", "?", "??", "a?c", "[ab]", "[a-c]*",
    "[!a]*", "[^a]*", "[z-a]", "a[]]b", "a[]-]b", "a[!]]b", "[]", "[", "a[b", "a\\[b", "[[:alpha:]]",
    "[[:digit:]]*", "[[:upper:]]*", "[[:nope:]]", "[[:alpha:]", "[[:space:]]", "a[[:punct:]]b", "[a-]*", "[-a]",
    "\\!x", "\\#x", "#x", "!important.log", "foo\\", "foo\\ ", "foo  ", "foo\\\\", "a\\ b", "**", "/**", "**/",
    "***", "a**", "**a", "a/**", "x/**/b", "1/**/6/*", "**/5/**", "*/*/*", "build/", "build/*", "build/**/*.o",
    "/build/sub", "sub/", "*.log", "logs/**/*.log", "é", ".*", ".hidden/", "*.TXT", "A.*", "a-b", "a^b", "a!b",
    "[\\]]*", "[a\\-z]", "[\\!]*", "*[", "*\\", "[!", "a/b/", "a/b/c/", "a/*/c", "a/*/b/*.txt", "q/*b*/r",
    "*a*b*c*", "1/*/3/**", "[0-9]/[0-9]/**", "**/**/z", "src/deep/er/", "src/deep/er", "\\a", "a\\", "[a-c-e]*",
    "[!a-z]*", "[a-zA-Z]", "*.[ch]", "**/*.[pt][yx]*", "src/*/", "*/", "/src/", "doc/*", "!", "\\", "/", "//",
    "a//b", "src//deep", "./a", "*.py/", "foo/**/", "**/foo/**", "**/b/**", "[[:lower:]]", "[[:xdigit:]]*",
    "[[:alnum:]]?", "[a-z]/**", "1/2/**/z", "1/**/**/z", "logs/*/*.log", "x/a/*", "?/?", "*/*", "[]a]", "[!]a]",
    "a[!-]b", "a[--b]b", "*a" * 12 + "*b", "**/" * 30 + "b", "a/**/" * 20 + "b", "*?" * 40 + "b",
]
RULE_SETS = [
    ["*.log", "!important.log"], ["build/", "!build/sub/"], ["src/**", "!src/deep/"], ["*", "!*.py", "!src/"],
    ["logs/", "!logs/keep.txt"], ["a", "!a"], ["*.py", "src/*.py", "!src/a.py"],
]


def _git_ignored(repo: Path, lines: list[str], paths: list[str]) -> set[str]:
    (repo / ".gitignore").write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = subprocess.run(["git", "-C", str(repo), "check-ignore", "-z", "--stdin"], input="\0".join(paths) + "\0",
                            capture_output=True, text=True, env=os.environ | {"GIT_CONFIG_NOSYSTEM": "1",
                                                                              "GIT_CONFIG_GLOBAL": "/dev/null"})
    assert result.returncode in (0, 1), result.stderr
    return {p for p in result.stdout.split("\0") if p}


def _ours(lines: list[str], paths: list[str], dirs: set[str]) -> set[str]:
    rules = IgnoreRules().extended("", "\n".join(lines) + "\n")
    out = set()
    for path in paths:
        parts = path.split("/")
        prefixes = ["/".join(parts[:i]) for i in range(1, len(parts))]
        if any(rules.ignored(p, True) for p in prefixes) or rules.ignored(path, path in dirs):
            out.add(path)
    return out


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    root = tmp_path_factory.mktemp("gitcorpus")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for d in PATHS_DIRS:
        (root / d).mkdir(parents=True, exist_ok=True)
    for f in PATHS_FILES:
        if not (root / f).is_dir():
            (root / f).parent.mkdir(parents=True, exist_ok=True)
            (root / f).write_text("x")
    return root


@pytest.mark.slow
def test_the_matcher_agrees_with_git_check_ignore(repo: Path) -> None:
    paths = sorted(set(PATHS_FILES) | set(PATHS_DIRS))
    disagreements = []
    for lines in [[p] for p in PATTERNS] + RULE_SETS:
        git = _git_ignored(repo, lines, paths)
        ours = _ours(lines, paths, set(PATHS_DIRS))
        if git != ours:
            disagreements.append((lines, sorted(git - ours), sorted(ours - git)))
    # the one known difference: git matches bytes, we match characters (a two-byte é is one `?` here, two in git)
    assert disagreements == [(["?"], [], ["é"]), (["??"], ["é"], []), (["[!]a]"], [], ["é"])]
    assert len(PATTERNS) + len(RULE_SETS) >= 120


@settings(max_examples=400, deadline=None)
@given(st.text("ab*?/[]!-\\", max_size=10), st.text("ab/-]", max_size=12))
def test_the_automaton_and_the_regular_expression_agree(pattern: str, path: str) -> None:
    """The two engines behind `Glob` on small inputs, where backtracking costs nothing."""
    try:
        tokens = pathmatch._tokens(pattern)
    except pathmatch.Malformed:
        return
    regex = "".join(re.escape(v) if k == "lit" else v for k, v in tokens)
    expected = re.fullmatch(regex, path, re.DOTALL) is not None
    assert pathmatch._Automaton(tokens).fullmatch(path, below=False) is expected
    below = re.fullmatch(regex + "(?:/.*)?", path, re.DOTALL) is not None
    assert pathmatch._Automaton(tokens).fullmatch(path, below=True) is below


# -- hostile patterns cost milliseconds ------------------------------------------------------------------------

HOSTILE = ["*a" * 12 + "*b", "**/" * 30 + "b", "a/**/" * 20 + "b", "*?" * 40 + "b", "[a]*" * 30 + "b"]


@pytest.mark.parametrize("pattern", HOSTILE)
def test_hostile_patterns_are_linear(pattern: str) -> None:
    name = "a" * 255
    deep = "/".join(["a"] * 1000)
    assert not Glob(pattern).fullmatch(name) and not Glob(pattern).fullmatch(deep)
    assert GlobSet([pattern]).match(deep) is None
    rules = IgnoreRules().extended("", pattern)
    assert not rules.ignored(deep, False)
    assert Glob(pattern[:-1] + "a").fullmatch(deep if "/" in pattern else name)  # and a match is still found


def _cli(ws: Path, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cli_agent", *args, "-C", str(ws)], capture_output=True, text=True,
                          timeout=timeout, env=os.environ | {"CI": "1"})


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    for i in range(30):
        (root / ("a" * 200) / str(i)).mkdir(parents=True)
        (root / ("a" * 200) / str(i) / ("a" * 250)).write_text("x\n")
    return root


@pytest.mark.slow
def test_a_hostile_list_files_pattern_search_glob_gitignore_and_lock_return_at_once(ws: Path) -> None:
    """Each of these ran for minutes with a backtracking matcher; the subprocess timeout is the only clock."""
    pattern = "*a" * 12 + "*b"
    listed = _cli(ws, "tools", "run", "list_files", json.dumps({"pattern": "**/" + pattern}))
    assert listed.returncode == 0 and json.loads(listed.stdout)["ok"], listed.stderr
    found = _cli(ws, "tools", "run", "search", json.dumps({"pattern": "x", "glob": pattern}))
    assert found.returncode == 0, found.stderr
    (ws / ".gitignore").write_text(pattern + "\n" + "a/**/" * 20 + "b\n")
    assert _cli(ws, "tools", "run", "list_files", "{}").returncode == 0
    (ws / ".cli-agent").mkdir()
    (ws / ".cli-agent" / "config.toml").write_text(f'locks = ["{pattern}", "{"*?" * 40}b"]\n')
    target = f"{'a' * 200}/0/{'a' * 250}"
    written = _cli(ws, "tools", "run", "write_file", json.dumps({"path": target, "content": "y\n"}), "--yes")
    assert written.returncode == 0, written.stderr


# -- what git skips, we skip; what can't be a lock is refused -------------------------------------------------

@pytest.mark.slow
@pytest.mark.parametrize("line", ["a[]]b", "[z-a]", "[", "foo\\", "[[:nope:]]", "[!", "*[", "a[b"])
def test_an_odd_gitignore_line_never_ends_a_run(tmp_path: Path, line: str) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".gitignore").write_text(f"{line}\n*.log\n")
    (ws / "kept.txt").write_text("x")
    (ws / "dropped.log").write_text("x")
    result = _cli(ws, "tools", "run", "list_files", "{}")
    assert result.returncode == 0, result.stderr
    files = json.loads(result.stdout)["data"]
    assert "kept.txt" in json.dumps(files) and "dropped.log" not in json.dumps(files)
    found = _cli(ws, "tools", "run", "search", json.dumps({"pattern": "x"}))  # ripgrep reads the same file
    assert found.returncode == 0, found.stderr
    paths = [m["path"] for m in json.loads(found.stdout)["data"]["matches"]]
    assert paths == ["kept.txt"]


@pytest.mark.slow
@pytest.mark.parametrize("lock", ["src/[a", "x\\", "[[:bogus:]]/*"])
@pytest.mark.parametrize("where", ["config", "facts"])
def test_an_invalid_lock_exits_2_naming_it(tmp_path: Path, lock: str, where: str) -> None:
    ws = tmp_path / "ws"
    (ws / ".cli-agent").mkdir(parents=True)
    quoted = json.dumps(lock)
    if where == "config":
        (ws / ".cli-agent" / "config.toml").write_text(f"locks = [{quoted}]\n")
    else:
        (ws / ".cli-agent" / "facts.toml").write_text(f"[locks]\npaths = [{quoted}]\n")
    result = _cli(ws, "tools", "run", "create_file", json.dumps({"path": "n.txt", "content": "x"}), "--yes")
    assert result.returncode == 2
    assert repr(lock) in result.stderr.splitlines()[-1] and "not a valid glob" in result.stderr
    assert not (ws / "n.txt").exists()


@pytest.mark.slow
def test_an_invalid_pattern_from_the_model_is_a_clear_tool_error(tmp_path: Path) -> None:
    assert glob_problem("a[") == "a '[' is never closed"
    assert glob_problem("ok/*.py") is None
    ws = tmp_path / "ws"
    ws.mkdir()
    result = _cli(ws, "tools", "run", "list_files", json.dumps({"pattern": "[[:nope:]]"}))
    assert result.returncode == 1 and "unknown character class" in json.loads(result.stdout)["errors"][0]
    result = _cli(ws, "tools", "run", "search", json.dumps({"pattern": "x", "glob": "src/[a"}))
    assert result.returncode == 1 and "never closed" in json.loads(result.stdout)["errors"][0]

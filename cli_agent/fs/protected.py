"""What the model's file tools may never change, by what it is rather than how it is spelt.

`protected_globs(root, config_files)` gives the sandbox's protected globs for a workspace: `.git` and `.cli-agent`
as spelt, plus an anchored glob for the real place of everything below that lies inside the workspace:

* `.cli-agent` and `.git` when they are symbolic links to a folder elsewhere in the workspace;
* the folder a `.git` file points to (`gitdir: PATH`, as `git worktree` and `--separate-git-dir` make), and that
  git dir's `commondir`;
* the config files the settings were read from (`--config FILE`, `CLI_AGENT_CONFIG`, the user config);
* the user's config dir (its `workflows/` folder shadows built-in workflows), state dir (undo journal, traces,
  trust store), cache dir, and `CLI_AGENT_HOME` itself.

A glob matching a folder covers everything below it, and the sandbox checks a write's canonical path (links
resolved), so a path through any link into these places is refused too.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

from cli_agent.fs import paths

__all__ = ["DEFAULT_PROTECTED", "protected_globs"]

DEFAULT_PROTECTED: tuple[str, ...] = (".git", ".git/**", ".cli-agent", ".cli-agent/**")
_GITDIR_MAX = 4096  # bytes of a `.git` file read


def protected_globs(root: Path, config_files: Iterable[str | Path] = ()) -> tuple[str, ...]:
    real_root = Path(os.path.realpath(root))
    places = [*_repository_places(real_root), *(Path(p).expanduser() for p in config_files),
              paths.user_config_dir(), paths.user_state_dir(), paths.user_cache_dir()]
    if os.environ.get("CLI_AGENT_HOME"):
        places.append(Path(os.environ["CLI_AGENT_HOME"]).expanduser())
    found = (inside_glob(real_root, place) for place in places)
    return tuple(dict.fromkeys([*DEFAULT_PROTECTED, *(g for g in found if g)]))


def _repository_places(root: Path) -> Iterator[Path]:
    yield root / paths.PROJECT_DIR  # its real path, when it is a link
    dot_git = root / ".git"
    yield dot_git
    gitdir = _gitdir(dot_git)
    if gitdir is not None:
        yield gitdir
        common = _read_small(gitdir / "commondir")
        if common:
            yield (gitdir / common.strip()).resolve()


def _gitdir(dot_git: Path) -> Path | None:
    """The folder a `.git` file names (`gitdir: PATH`, relative to the file's folder), else None."""
    text = _read_small(dot_git)
    if text is None or not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip().splitlines()[0].strip() if text[len("gitdir:"):].strip() else ""
    return (dot_git.parent / target).resolve() if target else None


def _read_small(path: Path) -> str | None:
    try:
        if not path.is_file():
            return None
        with open(path, "rb") as f:
            return f.read(_GITDIR_MAX).decode("utf-8", errors="replace")
    except OSError:
        return None


def inside_glob(root: Path, path: Path) -> str | None:
    """An anchored glob matching exactly `path`'s real place if it lies inside `root` (and is not the root itself),
    else None."""
    try:
        rel = Path(os.path.realpath(path)).relative_to(os.path.realpath(root))
    except ValueError:
        return None
    if str(rel) == ".":
        return None
    return "/" + re.sub(r"([*?\[\\])", r"\\\1", rel.as_posix())

"""HOME's tool folders a command may read: an allowlist, by name.

Toolchains keep their caches, installed interpreters and environments in known places under HOME. Only those are
shown, each read-only; HOME is otherwise empty in the sandbox. Whatever is not named is absent, so no credential
file in a cache can be read, at whatever depth, under whatever name, created whenever. A last name may be a glob
(`python3*`). `[sandbox] read_paths` in the user config shows more.

A place the user linked elsewhere in HOME (`~/.pyenv/version -> ~/.bashrc`) is shown only where its link leads to
another allowlisted place (`home_tool_allows`); a link out of HOME (a cache moved to another disk) is followed.
Environments kept in these places hold their own credentials (`ENV_HOLDERS`, `toolchains.PREFIX_SECRETS`): those
are masked.
"""

from __future__ import annotations

import fnmatch
import glob
import os
from pathlib import Path

HOME_TOOLS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("pip", (".cache/pip",)),
    ("uv", (".cache/uv", ".local/share/uv/python", ".local/share/uv/tools")),
    ("poetry", (".cache/pypoetry", ".local/share/pypoetry")),
    ("pipenv", (".cache/pipenv", ".local/share/virtualenvs")),
    ("hatch", (".cache/hatch", ".local/share/hatch")),
    ("pipx", (".local/share/pipx/venvs", ".local/pipx/venvs")),
    ("virtualenvwrapper", (".virtualenvs",)),
    ("pyenv", (".pyenv/bin", ".pyenv/libexec", ".pyenv/plugins", ".pyenv/shims", ".pyenv/versions",
               ".pyenv/pyenv.d", ".pyenv/version")),
    ("conda", (".conda/envs", ".conda/pkgs")),
    ("python user site", (".local/lib/python3*", ".local/bin")),
    ("pre-commit", (".cache/pre-commit",)),
    ("npm", (".npm/_cacache", ".npm/_npx")),
    ("yarn", (".cache/yarn", ".yarn/berry/cache")),
    ("pnpm", (".cache/pnpm", ".local/share/pnpm")),
    ("nvm", (".nvm/versions", ".nvm/alias", ".nvm/nvm.sh")),
    ("bun", (".bun/bin", ".bun/install/cache")),
    ("cargo", (".cargo/bin", ".cargo/registry", ".cargo/git")),
    ("rustup", (".rustup/toolchains", ".rustup/settings.toml", ".rustup/update-hashes")),
    ("go", ("go/pkg/mod", "go/bin")),
    ("maven", (".m2/repository",)),
    ("gradle", (".gradle/caches", ".gradle/wrapper/dists")),
    ("rbenv", (".rbenv/versions", ".rbenv/shims")),
    ("huggingface models", (".cache/huggingface/hub",)),
    ("playwright", (".cache/ms-playwright",)),
)

# The allowlisted places that hold whole environments (venvs, conda envs, Node prefixes), one level of them per
# pattern: each keeps its own credentials at its root (`toolchains.PREFIX_SECRETS`)
ENV_HOLDERS = (".virtualenvs/*", ".local/share/virtualenvs/*", ".local/share/pipx/venvs/*", ".local/pipx/venvs/*",
               ".conda/envs/*", ".pyenv/versions/*", ".pyenv/versions/*/envs/*", ".nvm/versions/node/*",
               ".local/share/uv/tools/*", ".local/share/uv/python/*", ".local/share/hatch/env/virtual/*/*")


def home_tool_allows(parts: tuple[str, ...]) -> bool:
    """Whether the place `parts` below HOME (real) lies in an allowlisted place (a glob matches one name)."""
    for _tool, names in HOME_TOOLS:
        for name in names:
            pattern = name.split("/")
            if len(parts) >= len(pattern) and all(fnmatch.fnmatchcase(p, q) for p, q in
                                                  zip(parts[:len(pattern)], pattern, strict=True)):
                return True
    return False


def home_tool_paths(home: Path) -> list[tuple[str, Path]]:
    """(tool, place) for the allowlisted places that exist under `home` (not yet resolved), in `HOME_TOOLS`' order."""
    out: list[tuple[str, Path]] = []
    for tool, names in HOME_TOOLS:
        for name in names:
            if any(c in name for c in "*?["):
                out += [(tool, Path(p)) for p in sorted(glob.glob(os.path.join(glob.escape(str(home)), name)))]
            elif os.path.lexists(home / name):
                out.append((tool, home / name))
    return out

"""Credential files: one list for what the command sandbox masks and what the file tools never return.

- `CREDENTIALS`: credential files and folders by their place under a home folder (`.ssh`, `.aws`, `.pgpass`,
  `.vault-token`, the shell histories, other agents' logins, ...). The sandbox masks them under HOME and at the
  workspace's root; the file tools (`read_file`, `search`, `list_files`, and everything else that reads through
  the `Workspace`) never return them under HOME, nor wherever a workspace holds them, at any depth (a copied home
  folder, a dotfiles repository). SSH private keys (`KEY_NAMES`) are credentials by name, anywhere.
- `HOME_PRIVATE`: folders and files under HOME that hold secrets among other things (`~/.config`, browser and mail
  profiles, `~/.npmrc`, ...). The sandbox never shows them; the file tools never return what lies there when the
  workspace holds them (a workspace inside one is the user's choice, and the sandbox shows it too).
- `/etc`: `ETC_SECRETS` by name, key material by name (`etc_secret_name`), and whatever others may not read
  (`etc_private`), since a command may run as root, who could read it anyway.
- cli-agent's own config (which may hold keys), state and cache (`own_folders`): never shown, never returned.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

import platformdirs

from cli_agent.contracts import dataclass
from cli_agent.fs import paths

__all__ = [
    "CREDENTIALS", "ETC_SECRETS", "HOME_PRIVATE", "KEY_NAMES", "credential_globs", "etc_private", "etc_secret_name",
    "home_folder", "own_folders",
]

CREDENTIALS = (
    # keys, clouds and package registries
    ".ssh", ".aws", ".azure", ".gnupg", ".password-store", ".local/share/keyrings", ".netrc", "_netrc",
    ".git-credentials", ".docker/config.json", ".kube/config", ".pypirc", ".cargo/credentials",
    ".cargo/credentials.toml", ".gem/credentials", ".composer/auth.json", ".config/composer/auth.json",
    ".config/gh/hosts.yml", ".config/hub", ".config/gcloud", ".config/rclone/rclone.conf", ".huggingface/token",
    ".cache/huggingface/token", ".config/github-copilot",
    # databases, storage, infrastructure and data platforms
    ".pgpass", ".my.cnf", ".mylogin.cnf", ".s3cfg", ".boto", ".vault-token", ".terraform.d/credentials.tfrc.json",
    ".kaggle/kaggle.json", ".databrickscfg", ".pulumi/credentials.json", ".fly/config.yml",
    # what was typed at a prompt: passwords and tokens end up in histories
    ".bash_history", ".zsh_history", ".sh_history", ".python_history", ".psql_history",
    ".mysql_history", ".sqlite_history", ".node_repl_history", ".rediscli_history", ".local/share/fish/fish_history",
    # other coding agents' logins
    ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json", ".local/share/opencode/auth.json",
    ".aider/oauth-keys.env",
)
HOME_PRIVATE = (".config", ".mozilla", ".thunderbird", ".pki", ".npmrc", ".yarnrc", ".yarnrc.yml", ".docker",
                ".kube", ".claude", ".claude.json", ".codex", ".gemini", "snap", ".var/app", "Library/Keychains")
KEY_NAMES = frozenset({"id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", "id_ecdsa_sk", "id_ed25519_sk"})
ETC_SECRETS = ("shadow", "shadow-", "gshadow", "gshadow-", "ssh", "sudoers", "sudoers.d", "security/opasswd",
               "ssl/private", "credstore", "credstore.encrypted", "libvirt", "NetworkManager/system-connections",
               "wpa_supplicant")

_ETC_KEY = re.compile(r"\.(key|keytab|p12|pfx|jks)$|privkey|secret|password|passwd-s3fs", re.IGNORECASE)


def _split(entries: Sequence[str]) -> dict[str, list[tuple[str, ...]]]:
    """The entries by their first name, folded, for a lookup per component."""
    out: dict[str, list[tuple[str, ...]]] = {}
    for entry in entries:
        parts = tuple(p.casefold() for p in entry.split("/"))
        out.setdefault(parts[0], []).append(parts)
    return out


_ANYWHERE = _split(CREDENTIALS)
_BY_LAST: dict[str, list[tuple[str, ...]]] = {}
for _entry in (e for entries in _ANYWHERE.values() for e in entries):
    _BY_LAST.setdefault(_entry[-1], []).append(_entry)
_PRIVATE = _split(HOME_PRIVATE)
_ETC = _split(ETC_SECRETS)
_FOLDED_KEYS = frozenset(k.casefold() for k in KEY_NAMES)


def credential_in(parts: Sequence[str]) -> str | None:
    """The credential entry that `parts` (a relative path's names) is or lies inside, at any depth, or None."""
    folded = [p.casefold() for p in parts]
    if folded and folded[-1] in _FOLDED_KEYS:
        return parts[-1]
    for end, name in enumerate(folded, 1):
        for entry in _BY_LAST.get(name, ()):
            if end >= len(entry) and tuple(folded[end - len(entry):end]) == entry:
                return "/".join(entry)
    return None


def credential_globs() -> list[str]:
    """`CREDENTIALS` and `KEY_NAMES` as `.gitignore` lines matching at any depth (for ripgrep's `--ignore-file`)."""
    return [f"**/{entry}" for entry in CREDENTIALS] + sorted(KEY_NAMES)


def credential_at(parts: tuple[str, ...], places: Places | None, st: os.stat_result | None = None) -> str | None:
    """Why the workspace path of names `parts` is a credential file: by its names at any depth, or, given the
    `places` around the workspace, by where it really lies (`secret_place`); None when it is not."""
    found = credential_in(parts)
    if found is None and places is not None and parts:
        found = secret_place(os.path.join(places.root, *parts), places, st)
    return found


def home_folder() -> Path | None:
    """HOME, real; None when unset or `/`."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    real = Path(os.path.realpath(home)) if home and home != "~" else None
    return None if real is None or real == Path("/") else real


def own_folders() -> list[str]:
    """cli-agent's config (keys), state (traces, undo journal) and cache folders: where CLI_AGENT_HOME puts them
    and the platform's own ones (an earlier session's stay there when CLI_AGENT_HOME points elsewhere)."""
    ours = [paths.user_config_dir(), paths.user_state_dir(), paths.user_cache_dir()]
    ours += [Path(f(paths.APP, appauthor=False)) for f in (platformdirs.user_config_dir, platformdirs.user_state_dir,
                                                          platformdirs.user_cache_dir, platformdirs.user_data_dir)]
    return [str(p) for p in dict.fromkeys(ours)]


def _below(outer: str, inner: str) -> tuple[str, ...] | None:
    """`inner`'s names below `outer` (both real, absolute), () when equal, None when not below."""
    if inner == outer:
        return ()
    prefix = outer.rstrip("/") + "/"
    return tuple(inner[len(prefix):].split("/")) if inner.startswith(prefix) else None


@dataclass(frozen=True)
class Places:
    """What lies around a workspace root (all real, absolute) such that where a file lies can make it secret."""
    root: str
    home: str | None  # HOME, when it holds the root or the root holds it
    etc: bool  # /etc holds the root or the root holds it
    own: tuple[str, ...]  # cli-agent's own folders that hold the root or lie in it


def places(root: str) -> Places | None:
    """The `Places` around the workspace `root` (real, absolute) that can make a file below it secret; None when
    there are none (HOME counts only when the root holds it or may lie in one of HOME's secret places)."""
    def nest(anchor: str) -> bool:
        return _below(anchor, root) is not None or _below(root, anchor) is not None

    home = home_folder()
    below_home = _below(str(home), root) if home is not None else None
    if below_home:  # the root lies in HOME: it matters only under a name that starts a secret place
        first = below_home[0].casefold()
        matters = first in _ANYWHERE or first in _PRIVATE
    else:
        matters = home is not None and nest(str(home))
    own = tuple(real for real in (os.path.realpath(p) for p in own_folders()) if nest(real))
    found = Places(root, str(home) if matters else None, nest("/etc"), own)
    return found if found.home or found.etc or own else None


def secret_place(real: str, around: Places, st: os.stat_result | None = None) -> str | None:
    """Why the file at `real` (a real absolute path inside the workspace `around.root`) is a secret by where it
    lies, or None: a credential entry under HOME (even when the workspace lies inside it), a private place of HOME
    that lies inside the workspace, cli-agent's own config, state or cache, or a secret of /etc (by name, or, given
    its stat, not readable by others)."""
    under_home = _below(around.home, real) if around.home is not None else None
    if under_home:
        entry = _anchored(under_home, _ANYWHERE)
        if entry is not None:
            return f"~/{entry}"
        private = _anchored(under_home, _PRIVATE)
        root_in_home = _below(around.home or "", around.root)  # None: the workspace holds HOME
        if private is not None and (root_in_home is None or len(root_in_home) < len(private.split("/"))):
            return f"~/{private}"
    if any(_below(own, real) is not None for own in around.own):
        return "cli-agent's own config, state or cache"
    under_etc = _below("/etc", real) if around.etc else None
    if under_etc:
        entry = _anchored(under_etc, _ETC)
        if entry is not None or etc_secret_name(under_etc[-1]) or (st is not None and etc_private(st)):
            return f"/etc/{entry or '/'.join(under_etc)}"
    return None


def _anchored(parts: tuple[str, ...], table: dict[str, list[tuple[str, ...]]]) -> str | None:
    """The entry of `table` (`_split`) that `parts` (names below an anchor) is or lies inside, or None."""
    if not parts:
        return None
    for entry in table.get(parts[0].casefold(), ()):
        if tuple(p.casefold() for p in parts[:len(entry)]) == entry:
            return "/".join(entry)
    return None


def etc_secret_name(name: str) -> bool:
    """Key material by name under /etc (`*.key`, `*.keytab`, `*privkey*`, `*secret*`, `*password*`)."""
    return bool(_ETC_KEY.search(name))


def etc_private(st: os.stat_result) -> bool:
    """A file or folder under /etc that others may not read (for a folder: not list and enter)."""
    if stat.S_ISDIR(st.st_mode):
        return not (st.st_mode & stat.S_IROTH and st.st_mode & stat.S_IXOTH)
    return not st.st_mode & stat.S_IROTH

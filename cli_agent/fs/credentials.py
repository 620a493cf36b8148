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
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Sequence
from pathlib import Path

__all__ = ["CREDENTIALS", "ETC_SECRETS", "HOME_PRIVATE", "KEY_NAMES", "credential_at", "credential_globs",
           "credential_in", "etc_private", "etc_secret_name", "home_folder", "places_secrets", "secret_place"]

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
_FOLDED_KEYS = frozenset(k.casefold() for k in KEY_NAMES)


def credential_in(parts: Sequence[str]) -> str | None:
    """The credential entry that `parts` (a relative path's names) is or lies inside, at any depth, or None."""
    folded = [p.casefold() for p in parts]
    if folded and folded[-1] in _FOLDED_KEYS:
        return parts[-1]
    for i, name in enumerate(folded):
        for entry in _ANYWHERE.get(name, ()):
            if tuple(folded[i:i + len(entry)]) == entry:
                return "/".join(entry)
    return None


def credential_globs() -> list[str]:
    """`CREDENTIALS` and `KEY_NAMES` as `.gitignore` lines matching at any depth (for ripgrep's `--ignore-file`)."""
    return [f"**/{entry}" for entry in CREDENTIALS] + sorted(KEY_NAMES)


def credential_at(root: str, placed: bool, rel: str, st: os.stat_result | None = None) -> str | None:
    """Why the workspace path `rel` (below the real root `root`) is a credential file: by its names at any depth,
    or, when `placed` (`places_secrets(root)`), by where it really lies (`secret_place`); None when it is not."""
    parts = tuple(p for p in rel.split("/") if p not in ("", "."))
    found = credential_in(parts)
    if found is None and placed and parts:
        found = secret_place(os.path.join(root, *parts), root, st)
    return found


def home_folder() -> Path | None:
    """HOME, real; None when unset or `/`."""
    home = os.environ.get("HOME") or os.path.expanduser("~")
    real = Path(os.path.realpath(home)) if home and home != "~" else None
    return None if real is None or real == Path("/") else real


def _below(outer: str, inner: str) -> tuple[str, ...] | None:
    """`inner`'s names below `outer` (both real, absolute), () when equal, None when not below."""
    if inner == outer:
        return ()
    prefix = outer.rstrip("/") + "/"
    return tuple(inner[len(prefix):].split("/")) if inner.startswith(prefix) else None


def places_secrets(root: str) -> bool:
    """Whether where a file lies under the workspace `root` (real, absolute) can make it secret: the root lies in
    HOME or /etc, or holds one of them."""
    home = home_folder()
    anchors = ["/etc", *([str(home)] if home is not None else [])]
    return any(_below(a, root) is not None or _below(root, a) is not None for a in anchors)


def secret_place(real: str, root: str, st: os.stat_result | None = None) -> str | None:
    """Why the file at `real` (a real absolute path inside the workspace `root`) is a secret by where it lies, or
    None: a credential entry under HOME (even when the workspace lies inside it), a private place of HOME that lies
    inside the workspace, or a secret of /etc (by name, or, given its stat, not readable by others)."""
    home = home_folder()
    under_home = _below(str(home), real) if home is not None else None
    if under_home:
        entry = _anchored(under_home, CREDENTIALS)
        if entry is not None:
            return f"~/{entry}"
        private = _anchored(under_home, HOME_PRIVATE)
        root_in_home = _below(str(home), root)  # None: the workspace holds HOME
        if private is not None and (root_in_home is None or len(root_in_home) < len(private.split("/"))):
            return f"~/{private}"
    under_etc = _below("/etc", real)
    if under_etc:
        entry = _anchored(under_etc, ETC_SECRETS)
        if entry is not None or etc_secret_name(under_etc[-1]) or (st is not None and etc_private(st)):
            return f"/etc/{entry or '/'.join(under_etc)}"
    return None


def _anchored(parts: tuple[str, ...], entries: Sequence[str]) -> str | None:
    """The entry of `entries` that `parts` (names below an anchor) is or lies inside, or None."""
    for entry in entries:
        names = entry.split("/")
        if list(parts[:len(names)]) == names:
            return entry
    return None


def etc_secret_name(name: str) -> bool:
    """Key material by name under /etc (`*.key`, `*.keytab`, `*privkey*`, `*secret*`, `*password*`)."""
    return bool(_ETC_KEY.search(name))


def etc_private(st: os.stat_result) -> bool:
    """A file or folder under /etc that others may not read (for a folder: not list and enter)."""
    if stat.S_ISDIR(st.st_mode):
        return not (st.st_mode & stat.S_IROTH and st.st_mode & stat.S_IXOTH)
    return not st.st_mode & stat.S_IROTH

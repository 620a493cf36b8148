"""The environment a command gets: an allowlist, not a scrub.

A command sees only the variables a shell and the toolchains need to find themselves (`BASE`: PATH, HOME, the
locale, the terminal type, the time zone and the folders of the interpreters and their package managers), plus
the ones the user names in `[sandbox] env_allow` (exact names or `PREFIX*`). Every other variable is dropped,
whatever its name: `GITHUB_PAT`, `DATABASE_URL`, `PGPASSWORD`, `HTTPS_PROXY` (which may hold a password) and
`npm_config__authToken` look no different from harmless settings, so none is guessed at. TMPDIR is the sandbox's
private /tmp. `dropped` names what was left out, for `cli-agent sandbox` and the session's note.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Mapping

__all__ = ["BASE", "command_env", "dropped"]

BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "NO_COLOR",
        "TZ", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "JAVA_HOME", "GOROOT", "GOPATH", "CARGO_HOME",
        "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS")


def _passes(name: str, allow: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in (*BASE, *allow))


def command_env(env: Mapping[str, str], allow: Iterable[str] = (), extra: Mapping[str, str] | None = None
                ) -> dict[str, str]:
    allowed = tuple(allow)
    out = {k: v for k, v in env.items() if _passes(k, allowed)}
    out["TMPDIR"] = "/tmp"
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    out.update(extra or {})
    return out


def dropped(env: Mapping[str, str], allow: Iterable[str] = ()) -> list[str]:
    """The names of `env` a command does not get, sorted (TMPDIR is replaced, not dropped)."""
    allowed = tuple(allow)
    return sorted(k for k in env if k != "TMPDIR" and not _passes(k, allowed))

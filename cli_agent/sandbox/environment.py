"""The environment a command gets: an allowlist, not a scrub.

A command sees only the variables a shell and the toolchains need to find themselves (`BASE`: PATH, HOME, the
locale, the terminal type, the time zone and the folders of the interpreters and their package managers), plus
the ones the user names in `[sandbox] env_allow` (exact names or `PREFIX*`). Every other variable is dropped,
whatever its name: `GITHUB_PAT`, `DATABASE_URL`, `PGPASSWORD`, `HTTPS_PROXY` (which may hold a password) and
`npm_config__authToken` look no different from harmless settings, so none is guessed at. TMPDIR is the sandbox's
private /tmp. `dropped` names what was left out (not the shell's own `PWD`, `OLDPWD`, `SHLVL`, `_`, which the
command's shell sets again), for `cli-agent sandbox`; `wanting` says it with a command's result when the command
failed for want of one: its output names a dropped variable, or it exited 127 (command not found).
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

__all__ = ["BASE", "dropped", "wanting"]

BASE = ("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*", "TERM", "COLORTERM", "NO_COLOR",
        "TZ", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "JAVA_HOME", "GOROOT", "GOPATH", "CARGO_HOME",
        "RUSTUP_HOME", "PYENV_ROOT", "NVM_DIR", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
        "NODE_EXTRA_CA_CERTS")
SHELL_OWN = ("PWD", "OLDPWD", "SHLVL", "_")  # set by the command's own shell: never missed
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SHOWN = 8


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
    """The names of `env` a command does not get, sorted (TMPDIR is replaced, not dropped; the shell's own are set
    again)."""
    allowed = tuple(allow)
    return sorted(k for k in env if k != "TMPDIR" and k not in SHELL_OWN and not _passes(k, allowed))


def wanting(output: str, exit_code: int | None, env: Mapping[str, str], allow: Iterable[str] = ()) -> str | None:
    """One line for a failed command that may have failed for want of a dropped variable: those its output names,
    or, for exit 127 (command not found), how many were dropped; None when the command did not fail that way."""
    if not exit_code:
        return None
    names = [n if n.isprintable() else repr(n) for n in dropped(env, allow)]
    said = set(_NAME.findall(output))
    named = [n for n in names if n in said]
    how = "[sandbox] env_allow in the user config passes more; `cli-agent sandbox` lists them"
    if named:
        verb = "is" if len(named) == 1 else "are"
        return (f"{_listed(named)} {verb} not passed to commands: the sandbox passes only allowlisted environment "
                f"variables ({how})")
    if exit_code == 127 and names:
        return (f"exit 127 (command not found); commands get only allowlisted environment variables, and "
                f"{len(names)} of this session's were dropped: {_listed(names)} ({how})")
    return None


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")

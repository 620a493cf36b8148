"""The environment a command gets: the user's, minus secrets, plus a private HOME and TMPDIR.

Dropped: names ending in `_API_KEY`, `_KEY`, `_TOKEN`, `_SECRET`, `_PASSWORD`, `_PASSWD`, `_CREDENTIALS` (and the
same words as whole names), every `AWS_*`, `AZURE_*`, `GOOGLE_APPLICATION_CREDENTIALS`, and cli-agent's own
`CLI_AGENT_*`; also the ones that point at a display, an agent socket or a session bus. `allow` names (exact, or
`PREFIX*`) are kept whatever they look like.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable, Mapping

__all__ = ["is_secret", "scrubbed_env"]

_SECRET = re.compile(
    r"(^|_)(API_?KEY|KEY|TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIALS?|PRIVATE_KEY|ACCESS_KEY|AUTH)$"
    r"|^(AWS|AZURE|CLI_AGENT|LITELLM|OPENAI|ANTHROPIC|GEMINI)_"
    r"|^(GOOGLE_APPLICATION_CREDENTIALS|SSH_AUTH_SOCK|GPG_AGENT_INFO|DBUS_SESSION_BUS_ADDRESS|DISPLAY|"
    r"WAYLAND_DISPLAY|XAUTHORITY|KRB5CCNAME|NETRC|DOCKER_HOST|KUBECONFIG)$",
    re.IGNORECASE)


def is_secret(name: str) -> bool:
    return bool(_SECRET.search(name))


def scrubbed_env(env: Mapping[str, str], allow: Iterable[str] = (), extra: Mapping[str, str] | None = None,
                 home: str | None = None) -> dict[str, str]:
    allowed = tuple(allow)
    out = {k: v for k, v in env.items()
           if not is_secret(k) or any(fnmatch.fnmatchcase(k, pattern) for pattern in allowed)}
    out["TMPDIR"] = "/tmp"
    if home is not None:
        out["HOME"] = home
    out.setdefault("PATH", "/usr/local/bin:/usr/bin:/bin")
    out.update(extra or {})
    return out

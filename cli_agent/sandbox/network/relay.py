"""The relay inside the sandbox: it listens on the sandbox's own 127.0.0.1:`PORT` and hands each connection to the
proxy's Unix socket, bound into the sandbox at `SOCKET`. The command's HTTP_PROXY and HTTPS_PROXY name it.

It is a few lines of Python run by the interpreter cli-agent itself runs on (shown read-only in every sandbox),
with `-I -S`: nothing of the workspace or the environment is imported. It binds first, then forks: the child
relays, the parent becomes the command (`exec`), so the command never starts before the relay listens, and the
relay dies with the sandbox's PID namespace when the command ends.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

SOCKET = "/run/cli-agent-proxy.sock"
PORT = 3128

_RELAY = r"""
import os, socket, sys, threading
path, port, argv = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("127.0.0.1", port))
srv.listen(128)
if os.fork():
    srv.close()
    os.execvp(argv[0], argv)
null = os.open(os.devnull, os.O_RDWR)
for fd in (0, 1, 2):
    os.dup2(null, fd)
"""

RELAY_LOOP = r"""
def pump(a, b):
    try:
        while True:
            data = a.recv(65536)
            if not data:
                break
            b.sendall(data)
        b.shutdown(socket.SHUT_WR)
    except OSError:
        pass
def serve(c):
    u = socket.socket(socket.AF_UNIX)
    try:
        u.connect(path)
    except OSError:
        c.close()
        return
    back = threading.Thread(target=pump, args=(u, c), daemon=True)
    back.start()
    pump(c, u)
    back.join()
    c.close()
    u.close()
while True:
    c, _ = srv.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


def relay_argv(command: Sequence[str]) -> list[str]:
    """`command` run behind the relay: the relay listens, then the command starts. The interpreter is cli-agent's
    own, or, where the sandbox's user cannot run that one (it lives in another user's home), python3 on PATH."""
    python = os.path.realpath(sys.executable)
    pick = 'p="$1"; shift; [ -x "$p" ] || p=python3; exec "$p" -I -S -c "$@"'
    return ["/bin/sh", "-c", pick, "cli-agent-relay", python, _RELAY + RELAY_LOOP, SOCKET, str(PORT), *command]


def proxy_env(proxied: Sequence[str] = ()) -> dict[str, str]:
    """The variables that send a command's HTTP and HTTPS to the relay: the ones curl, pip, git, cargo, go and npm
    read. Local names and addresses go direct (a server started in the sandbox), but for those in `proxied` (a rule
    names them: the host's local package mirror)."""
    url = f"http://127.0.0.1:{PORT}"
    local = ",".join(n for n in ("localhost", "127.0.0.1", "::1") if n not in proxied)
    return {"HTTP_PROXY": url, "HTTPS_PROXY": url, "http_proxy": url, "https_proxy": url, "NO_PROXY": local,
            "no_proxy": local, "npm_config_proxy": url, "npm_config_https_proxy": url, "npm_config_noproxy": local,
            "CARGO_HTTP_PROXY": url}

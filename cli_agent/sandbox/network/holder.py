"""The session's one network namespace: a small process (`NetHolder`) that makes it and holds it for the session, with
the relay to the proxy listening inside it, so every command of the session, foreground or background, joins the
same loopback: a later command reaches a server a background command started on 127.0.0.1, and the host's own
loopback stays out.

The holder is a few lines of Python run by the interpreter cli-agent itself runs on, with `-I -S`. It makes a user
namespace (its user mapped to itself, so it works unprivileged as well as as root) and a network namespace, brings
its loopback up, binds the relay on 127.0.0.1:`PORT` (handing each connection to the proxy's Unix socket, which it
reaches on the host's filesystem) and says "ready". It ends when its stdin closes: cli-agent holds the other end,
so the holder ends with cli-agent however cli-agent ends, and `close` ends it at once.

It also connects for cli-agent (`connect`): over a socket pair it was given at birth, cli-agent sends "ADDRESS
PORT TIMEOUT" with one end of a fresh socket pair for the answer; the holder connects from inside the namespace
and passes the connected socket back (SCM_RIGHTS), or a line saying why not. That is how web_fetch reaches a
server a command of the session started on 127.0.0.1.

A command joins with `nsenter` (the holder's user and network namespaces, its own credentials kept) in front of
bwrap, which then makes every other namespace as usual but no network one. Where no holder can be made (no
`nsenter`, no user namespaces) `start` says why and the session falls back to a network namespace per command.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import subprocess
import sys
from collections.abc import Sequence

from cli_agent.sandbox.network.relay import PORT, RELAY_LOOP

READY_WAIT_S = 5.0

_HOLDER = r"""
import ctypes, fcntl, os, socket, struct, sys, threading
path, port, ctl = sys.argv[1], int(sys.argv[2]), socket.socket(fileno=int(sys.argv[3]))
uid, gid = os.getuid(), os.getgid()
try:
    if ctypes.CDLL(None, use_errno=True).unshare(0x10000000 | 0x40000000):  # CLONE_NEWUSER | CLONE_NEWNET
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open("/proc/self/" + name, "w") as f:
            f.write(text)
    with socket.socket() as s:  # SIOCSIFFLAGS: lo up, loopback, running
        fcntl.ioctl(s, 0x8914, struct.pack("16sH14x", b"lo", 0x1 | 0x8 | 0x40))
    srv = socket.socket()
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(("127.0.0.1", port))
    srv.listen(128)
except OSError as exc:
    print(f"no network namespace for the session: {exc}", flush=True)
    sys.exit(1)
def orphaned():
    while os.read(0, 4096):
        pass
    os._exit(0)
def connect(reply, address, port, timeout):
    c = socket.socket(socket.AF_INET6 if ":" in address else socket.AF_INET)
    try:
        c.settimeout(timeout)
        c.connect((address, port))
        socket.send_fds(reply, [b"ok"], [c.fileno()])
    except OSError as exc:
        try:
            reply.send(str(exc.strerror or exc).encode()[:400])
        except OSError:
            pass
    c.close()
    reply.close()
def connector():
    while True:
        msg, fds, _, _ = socket.recv_fds(ctl, 512, 1)
        if not msg:
            os._exit(0)
        if not fds:
            continue
        reply = socket.socket(fileno=fds[0])
        try:
            address, to, timeout = msg.decode().split()
            args = (reply, address, int(to), min(float(timeout), 60.0))
        except ValueError:
            reply.close()
            continue
        threading.Thread(target=connect, args=args, daemon=True).start()
threading.Thread(target=orphaned, daemon=True).start()
threading.Thread(target=connector, daemon=True).start()
print("ready", flush=True)
null = os.open(os.devnull, os.O_RDWR)
os.dup2(null, 1)
"""


class NetHolder:
    """The holder of one session's network namespace (see the module's docstring)."""

    def __init__(self) -> None:
        self.popen: subprocess.Popen[bytes] | None = None
        self.problem = ""  # why there is no holder, once `start` failed
        self._nsenter = ""
        self._control: socket.socket | None = None  # our end of the pair `connect` asks through

    def start(self, proxy_socket: str) -> bool:
        """Make the namespace, its relay handing connections to `proxy_socket`; False (and `problem`) if it cannot."""
        nsenter = shutil.which("nsenter")
        if nsenter is None:
            self.problem = "no nsenter (util-linux) to join a shared network namespace"
            return False
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with theirs:
            popen = _spawn(proxy_socket, theirs.fileno())
        if isinstance(popen, str):
            ours.close()
            self.problem = popen
            return False
        assert popen.stdout is not None
        ready, _, _ = select.select([popen.stdout], [], [], READY_WAIT_S)
        said = popen.stdout.readline().decode(errors="replace").strip() if ready else "it did not answer"
        popen.stdout.close()
        if said != "ready":
            self.problem = said or "the holder of the network namespace ended"
            ours.close()
            _end(popen)
            return False
        self.popen, self._nsenter, self._control = popen, nsenter, ours
        return True

    @property
    def alive(self) -> bool:
        return self.popen is not None and self.popen.poll() is None

    def enter(self, argv: Sequence[str]) -> list[str]:
        """`argv` (bwrap's) run inside the held namespace."""
        assert self.popen is not None
        ns = f"/proc/{self.popen.pid}/ns"
        return [self._nsenter, "--preserve-credentials", f"--user={ns}/user", f"--net={ns}/net", "--", *argv]

    def connect(self, address: str, port: int, timeout: float) -> socket.socket:
        """A socket connected from inside the held namespace to `address` (an IP address) and `port`; OSError
        saying why not (refused, timed out, the holder gone)."""
        if self._control is None:
            raise OSError("the session's network namespace has ended")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        with ours:
            with theirs:
                socket.send_fds(self._control, [f"{address} {port} {max(timeout, 0.001):.3f}".encode()],
                                [theirs.fileno()])
            ours.settimeout(max(timeout, 0.001) + 1.0)  # the holder's own connect times out first
            said, fds, _, _ = socket.recv_fds(ours, 512, 1)
        if not fds:
            raise OSError(said.decode(errors="replace") or "the holder of the network namespace did not answer")
        connected = socket.socket(fileno=fds[0])
        connected.settimeout(timeout)
        return connected

    def close(self) -> None:
        if self._control is not None:
            self._control.close()
            self._control = None
        if self.popen is not None:
            _end(self.popen)
            self.popen = None


def _spawn(proxy_socket: str, control: int) -> subprocess.Popen[bytes] | str:
    """The holder started by cli-agent's own interpreter or, where this user may not run that one (it lives in
    another user's home), python3 on PATH; else why not."""
    problem = "no Python to hold the session's network namespace"
    for python in dict.fromkeys((sys.executable, os.path.realpath(sys.executable), shutil.which("python3"))):
        if not python:
            continue
        try:
            return subprocess.Popen([python, "-I", "-S", "-c", _HOLDER + RELAY_LOOP, proxy_socket, str(PORT),
                                     str(control)],
                                    stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                    start_new_session=True, close_fds=True, pass_fds=(control,))
        except OSError as exc:
            problem = f"no holder for the session's network namespace: {exc}"
    return problem


def _end(popen: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(OSError):
        if popen.stdin is not None:
            popen.stdin.close()
    with contextlib.suppress(ProcessLookupError):
        popen.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        popen.wait(timeout=5)

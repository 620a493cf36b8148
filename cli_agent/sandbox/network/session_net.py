"""The network of a session's commands: `SessionNet` owns the proxy (started at the first command, closed with the
session), decides each connection (the rules, the hosts granted in this session, else the user's answer when
someone is asking, else refused) and keeps the connections for whoever shows them (`drain`).

A command gets it through `run_in_sandbox(..., net=...)`: it joins the session's one network namespace, where the
relay to the proxy listens (`holder`: `enter` in front of bwrap, `joined` so bwrap makes no network namespace of its
own), and gets the proxy variables in its environment (`env`). Where no such namespace can be made, each command
gets a namespace of its own instead: the proxy's socket bound read-only at `relay.SOCKET` and the relay in front of
the command (`bwrap_args`, `wrap`).

Asking: the proxy's thread never talks to the user. When a front end is draining questions (`asking` is on while
a command runs in the foreground) the thread posts a `NetQuestion` and waits for its answer; the front end takes
it with `questions()` and answers it with `NetQuestion.answer`. Otherwise an unlisted host is refused at once.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import socket
import tempfile
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING

from cli_agent.contracts import ConfigError, ToolError, dataclass
from cli_agent.sandbox.network.address import Resolver, resolved
from cli_agent.sandbox.network.allow_file import keep_host
from cli_agent.sandbox.network.holder import NetHolder
from cli_agent.sandbox.network.relay import SOCKET, proxy_env, relay_argv
from cli_agent.sandbox.network.rules import NetRules, allow_rule, allow_setting

if TYPE_CHECKING:
    from cli_agent.sandbox.network.proxy import Connection, NetProxy

__all__ = ["NetQuestion", "SessionNet"]

ANSWER_WAIT_S = 300.0  # a question no one answers in this time is a refusal


@dataclass
class NetQuestion:
    """A command's first connection to a host no rule allows: "once", "session", "always" (for the session, and
    `rule` written to the user config) or "no"."""

    host: str
    port: int
    _done: threading.Event = field(default_factory=threading.Event, repr=False)
    grant: str = "no"

    @property
    def rule(self) -> str:
        """The `[sandbox.network] allow` rule "always" writes."""
        return allow_rule(self.host, self.port)

    def answer(self, grant: str) -> None:
        self.grant = grant
        self._done.set()


class SessionNet:
    """One per session; `close` when it ends. `resolve` is the name lookup the proxy uses (tests inject one)."""

    def __init__(self, rules: NetRules, resolve: Resolver = resolved, shared: bool = True,
                 config_file: Path | None = None) -> None:
        self.rules = rules
        self.config_file = config_file  # where "always" writes the host (None: the user config)
        self.resolve = resolve
        self.asking = False
        self._lock = threading.Lock()
        self._log: list[Connection] = []
        self._refused: dict[tuple[str, int], str] = {}  # since the last `refusals`
        self._questions: queue.Queue[NetQuestion] = queue.Queue()
        self._folder: str | None = None
        self._proxy: NetProxy | None = None
        self._holder: NetHolder | None = None
        self.unshared_why = ""  # why commands do not share one network namespace, once started
        self.shared = shared  # one network namespace for all the session's commands, where it can be made

    def start(self) -> str:
        """The proxy's socket on the host, the proxy started if it was not."""
        with self._lock:
            if self._proxy is None:
                from cli_agent.sandbox.network.proxy import NetProxy  # deferred: the proxy loads with the first command

                self._folder = tempfile.mkdtemp(prefix="cli-agent-net-")
                weakref.finalize(self, shutil.rmtree, self._folder, True)  # gone at exit even if never closed
                self._proxy = NetProxy(os.path.join(self._folder, "proxy.sock"), self)
            return self._proxy.path

    def _hold(self) -> NetHolder | None:
        """The holder of the session's network namespace, made with the first command that needs it."""
        socket = self.start()
        with self._lock:
            if self._holder is not None and not self._holder.alive:  # killed from outside: a new namespace
                self._holder = None
            if self.shared and self._holder is None:
                holder = NetHolder()
                if holder.start(socket):
                    self._holder = holder
                    weakref.finalize(self, holder.close)
                else:
                    self.shared, self.unshared_why = False, holder.problem
            return self._holder

    def close(self) -> None:
        with self._lock:
            if self._holder is not None:
                self._holder.close()
                self._holder = None
            if self._proxy is not None:
                self._proxy.close()
                self._proxy = None
            if self._folder is not None:
                shutil.rmtree(self._folder, ignore_errors=True)
                self._folder = None

    # what a sandboxed command gets
    @property
    def joined(self) -> bool:
        """Commands join the session's network namespace (bwrap makes none)."""
        return self._hold() is not None

    def enter(self, argv: Sequence[str]) -> list[str]:
        """bwrap's `argv`, run inside the session's network namespace (unchanged without one)."""
        holder = self._hold()
        return holder.enter(argv) if holder is not None else list(argv)

    def bwrap_args(self) -> list[str]:
        socket = self.start()
        return [] if self.joined else ["--ro-bind", socket, SOCKET]

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return list(argv) if self.joined else relay_argv(argv)

    def env(self) -> dict[str, str]:
        named = [r.host for r in self.rules.rules if r.port is not None]
        return proxy_env([n for n in ("localhost", "127.0.0.1", "::1") if n in named])

    def reach_loopback(self, host: str, addresses: Sequence[str], port: int, timeout: float) -> socket.socket:
        """A socket connected to `port` of the session's own loopback (`addresses`: loopback addresses `host`
        resolved to), from inside its network namespace, where a server a command of the session started listens;
        ToolError saying why not. It never makes the namespace: before the first command there is nothing there."""
        with self._lock:
            holder = self._holder if self._holder is not None and self._holder.alive else None
            apart = "" if self.shared else self.unshared_why or "each command has a network namespace of its own"
        if holder is None:
            why = (f"the session's commands do not share a network namespace ({apart})" if apart else
                   "the session has no network namespace yet: no command has run, so no server of its listens")
            raise ToolError(f"cannot reach {host}:{port} on the session's loopback: {why}")
        last = ""
        for address in addresses:
            try:
                return holder.connect(address, port, timeout)
            except OSError as exc:
                last = exc.strerror or str(exc)
        raise ToolError(f"cannot connect to {host}:{port} on the session's loopback: {last or 'no address'}")

    # the gate the proxy asks
    def decide(self, host: str, port: int) -> tuple[bool, str]:
        denied = self.rules.denies(host, port)
        if denied is not None:
            return False, f"{host}:{port} is {denied}"
        rule = self.rules.allows(host, port)
        if rule is not None:
            return True, rule
        if not self.asking:
            return False, f"{host}:{port} is not allowed: {allow_setting(host, port)}"
        question = NetQuestion(host, port)
        self._questions.put(question)
        question._done.wait(ANSWER_WAIT_S)
        if question.grant in ("session", "always"):
            with self._lock:
                self.rules = self.rules.grant(host, port)
        if question.grant == "no":
            return False, f"{host}:{port} was refused by the user"
        if question.grant == "always":
            return True, self._kept(host, port)
        return True, f"allowed by the user ({question.grant})"

    def _kept(self, host: str, port: int) -> str:
        """"Always": the host written to the user config's `[sandbox.network] allow`; what the connection says."""
        rule = allow_rule(host, port)
        try:
            written = keep_host(rule, self.config_file)
        except ConfigError as exc:
            return f"allowed by the user for this session; not kept: {exc}"
        return f'allowed by the user, always: "{rule}" added to [sandbox.network] allow in {written}'

    def names_address(self, host: str, port: int, address: str) -> bool:
        return self.rules.names_address(host, port, address)

    def record(self, connection: Connection) -> None:
        with self._lock:
            self._log.append(connection)
            if not connection.allowed:
                self._refused.setdefault((connection.host, connection.port), connection.why)

    # what the front end takes
    def drain(self) -> list[Connection]:
        """The connections since the last drain, oldest first."""
        with self._lock:
            out, self._log = self._log, []
        return out

    def refusals(self) -> list[str]:
        """One line per host refused since the last call (what a command's result says)."""
        with self._lock:
            out, self._refused = list(self._refused.values()), {}
        return out

    def questions(self) -> Iterator[NetQuestion]:
        """The questions waiting for an answer, each once."""
        while True:
            try:
                yield self._questions.get_nowait()
            except queue.Empty:
                return

    @contextlib.contextmanager
    def asked_by(self) -> Iterator[None]:
        """While this holds, unlisted hosts are asked about (the caller drains `questions`); then refused again,
        and any question left is answered no."""
        self.asking = True
        try:
            yield
        finally:
            self.asking = False
            for question in self.questions():
                question.answer("no")

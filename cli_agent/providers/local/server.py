"""The local model's server child: `LlamaServer` starts `python -m cli_agent.providers.local.engine` on 127.0.0.1
at a free port, waits until it answers, saves and restores its slot, and stops its whole process group. With
`keep_s` it uses the server kept from an earlier cli-agent when there is one that fits, or starts one that is kept
after it (`kept`: it outlives this process, ends on its own after `keep_s` idle seconds, and is never stopped here).

The child gets its own process group (so a Ctrl-C at the terminal reaches only us, and `stop` can end everything it
spawned), `PR_SET_PDEATHSIG` on Linux so the kernel kills it if we die without cleaning up (kill -9, a crash), and
an `atexit` hook for an exit that skips `close`. The thread counts llama.cpp is given are chosen here too.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO

from cli_agent.contracts import ProviderError
from cli_agent.providers.local.kept import Keeper, Record, end_server, is_engine, server_key
from cli_agent.providers.local.model import install_command
from cli_agent.providers.local.runtime import runtime_unfit
from cli_agent.providers.local.warm_cache import WarmCache
from cli_agent.providers.openai_http import import_httpx
from cli_agent.providers.waiting import raise_if_cancelled

ALIAS = "local"  # the model name the server answers to
_SAVE_TIMEOUT_S = 15.0  # a state of a full 8k context is ~230 MB: written in about a second
_PR_SET_PDEATHSIG = 1
SPECULATIVE = ("ngram_simple", "ngram_mod", "off")  # the draft-free speculative decodings the engine offers
_RUNTIME_FAILED = 3  # the engine's exit code when xllamacpp does not import
_ERROR_LINE = re.compile(r"^\S+ E (.*)$")  # llama.cpp's log: `0.00.003.923 E llama_model_load: error ...`
_KEPT: list[subprocess.Popen[bytes]] = []  # the servers started here to be kept: they outlive their Popen


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_threads(load: Callable[[], tuple[float, float, float]] | None = None) -> int:
    """Threads for generating and for evaluating prompts: the cores this process may use that the machine's
    one-minute load leaves idle, at least one. Measured on 2 cores with Qwen (`benchmarks/local_threads.py`): idle,
    2 threads generate 1.6 times and evaluate 1.9 times as fast as 1; beside other work (load 2-3), 2 threads
    generate 2 times slower than 1 (llama.cpp's threads spin at each step and wait for each other)."""
    cores = _cores()
    try:
        busy = (load or os.getloadavg)()[0]
    except OSError:
        busy = 0.0
    return max(1, min(cores, cores - int(busy)))


def _die_with_parent() -> Callable[[], None] | None:
    """A preexec_fn asking the kernel to SIGKILL the child when this thread's process dies (Linux only).
    The death signal follows the thread that forked: start the server from the main thread."""
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # deferred: ~4 ms of a run that may never start a server

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        prctl = libc.prctl
    except (OSError, AttributeError):
        return None
    parent = os.getpid()

    def preexec() -> None:
        prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
        if os.getppid() != parent:  # we died between fork and prctl
            os._exit(1)

    return preexec


class LlamaServer:
    """One llama.cpp server child (`engine`) on 127.0.0.1 at a free port."""

    def __init__(self, model_path: Path, *, threads: int, context_size: int, batch_threads: int | None = None,
                 cache: WarmCache | None = None, speculative: str = "off", keep_s: int = 0) -> None:
        self.model_path = model_path
        self.keep_s = keep_s
        self.keeper: Keeper | None = None  # the kept server's lock, while this process uses it
        self.adopted: int | None = None  # the pid of a kept server started by an earlier process
        self.speculative = speculative
        self.cache = cache
        self.threads = threads
        self.batch_threads = batch_threads or threads
        self.context_size = context_size
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self._ready = False

    @property
    def api_base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ready(self) -> bool:
        """It answered, and has not been stopped since."""
        return self._ready and self.pid is not None

    @property
    def pid(self) -> int | None:
        return self.process.pid if self.process else self.adopted

    def _exit_code(self) -> int | None:
        """None while it runs; its exit code once it has ended (-1 for a kept one, whose code is not ours)."""
        if self.process is not None:
            return self.process.poll()
        return None if self.adopted is None or is_engine(self.adopted) else -1

    def command(self) -> list[str]:
        return [sys.executable, "-m", "cli_agent.providers.local.engine", "--model", str(self.model_path),
                "--port", str(self.port), "--ctx", str(self.context_size), "--threads", str(self.threads),
                "--batch-threads", str(self.batch_threads), "--speculative", self.speculative] + (
                ["--slot-save-path", str(self.cache.folder)] if self.cache else []) + (
                ["--keep-record", str(self.keeper.record_path), "--keep-idle-s", str(self.keep_s)]
                if self.keeper else [])

    def start(self) -> None:
        """Start the child (or take the kept one) and return at once; `wait_ready` waits for it to answer."""
        if self.process is not None or self.adopted is not None:
            return
        if self.keep_s > 0 and self.keeper is None:
            self.keeper = Keeper.claim()  # None: another cli-agent uses the kept server, this one gets its own
        slots = self.cache.folder if self.cache else None
        key = server_key(self.model_path, self.context_size, (self.threads, self.batch_threads), self.speculative,
                         slots)
        earlier = self.keeper.record() if self.keeper else None
        if self.keeper and earlier is not None and is_engine(earlier.pid):
            if earlier.key == key:
                self.adopted, self.port = earlier.pid, earlier.port
                self._log = open(self.keeper.log_path, "rb")  # noqa: SIM115 (closed in stop)
                atexit.register(self.stop)
                return
            end_server(earlier.pid)  # another model or context size: this process holds the lock, no one uses it
        self.port = _free_port()
        if self.keeper:
            self._log = open(self.keeper.log_path, "w+b")  # noqa: SIM115 (closed in stop)
        else:
            self._log = tempfile.TemporaryFile(prefix="cli-agent-llama-")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        preexec_fn=None if self.keeper else _die_with_parent(),
                                        env=os.environ | {"PYTHONUNBUFFERED": "1"})
        if self.keeper:
            self.keeper.write(Record(self.process.pid, self.port, key))
            _KEPT.append(self.process)  # never collected while it runs (it outlives this process)
        atexit.register(self.stop)

    def wait_ready(self, timeout_s: float) -> None:
        """Poll `/health` until it answers; a child that exits, or no answer in time, is an error. A port taken
        between choosing it and binding it (another program was quicker) is chosen again, twice at most."""
        if self._ready:
            return
        httpx = import_httpx()  # without httpx's command-line client (click, rich, pygments)
        if self.pid is None:
            self.start()
        deadline = time.monotonic() + timeout_s
        rebinds = 2
        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while True:
                code = self._exit_code()
                if code is not None and rebinds and "couldn't bind" in self.log_tail(20):
                    rebinds -= 1
                    self.stop(failed=True)
                    self.start()
                    continue
                if code is not None:
                    fix = ""
                    if code == _RUNTIME_FAILED:
                        fix = "; " + (runtime_unfit() or f"reinstall the runtime: {install_command()}")
                    raise ProviderError(f"the local model server exited with code {code} "
                                        f"while loading {self.model_path.name}: {self.log_tail()}{fix}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.base}/health").status_code == 200:
                        self._ready = True
                        return
                if time.monotonic() >= deadline:
                    raise ProviderError(f"the local model server did not answer within {timeout_s:.0f}s: "
                                        f"{self.log_tail()}")
                raise_if_cancelled()  # an editor's cancel while the model loads
                time.sleep(0.05)

    def check_alive(self) -> None:
        code = self._exit_code()
        if code is not None:
            raise ProviderError(f"the local model server stopped (exit code {code}): {self.log_tail()}")

    def log_tail(self, lines: int = 6) -> str:
        """The server's last words on one line: llama.cpp's error lines (`... E message`) and the child's own
        `local_engine:` line when there are any, else its last lines."""
        if self._log is None:
            return "no log"
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            text = self._log.read()[-16000:].decode("utf-8", errors="replace")
            all_lines = [line.strip() for line in text.splitlines() if line.strip()]
            errors = [match.group(1) for line in all_lines if (match := _ERROR_LINE.match(line))]
            errors += [line for line in all_lines if line.startswith("local_engine:")]
            tail = list(dict.fromkeys(errors))[-lines:] or all_lines[-lines:]
            return " | ".join(tail) or "no output"
        return "no log"

    def slot(self, action: str, filename: str, timeout_s: float = _SAVE_TIMEOUT_S) -> bool | None:
        """`POST /slots/0?action=save|restore` with a file name under the server's slot_save_path: True if done,
        False if the server refused it, None if it did not answer within `timeout_s` (the action waits its turn
        behind a request still being read, such as the one a run cut short at its deadline)."""
        httpx = import_httpx()
        try:
            with httpx.Client(trust_env=False, timeout=timeout_s) as client:
                answer = client.post(f"{self.base}/slots/0", params={"action": action}, json={"filename": filename})
        except httpx.HTTPError:
            return None
        return answer.status_code == 200

    def stop(self, grace_s: float = 1.0, *, failed: bool = False) -> None:
        """SIGTERM the child's process group, SIGKILL it after `grace_s`; safe to call more than once. A kept
        server that answered stays for the next cli-agent (`failed`: it did not serve, and goes)."""
        atexit.unregister(self.stop)
        keeper, self.keeper = self.keeper, None
        if keeper is not None:
            alive = self._exit_code() is None
            used = alive and self._ready and not failed
            if alive and not used and self.pid is not None:
                end_server(self.pid, grace_s)
            keeper.release(used=used)
            self.process, self.adopted, self._ready = None, None, False
            if self._log is not None:
                self._log.close()
                self._log = None
            return
        process, self.process, self._ready = self.process, None, False
        if process is not None and process.poll() is None:  # still ours: its group id cannot have been reused
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(grace_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

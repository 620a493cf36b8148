"""The bundled offline model: llama-cpp-python's OpenAI-compatible server on 127.0.0.1, kept warm for a session.

    provider = LocalProvider(settings.local)   # files verified, server starting in the background
    for item in provider.stream(request): ...  # waits once until the server answers, then plain OpenAI HTTP
    provider.close()                           # the server's whole process group is stopped

`LlamaServer` owns the child process `python -m llama_cpp.server`: its own process group (so a Ctrl-C at the
terminal reaches only us, and `stop` can end everything it spawned), `PR_SET_PDEATHSIG` on Linux so the kernel
kills it if we die without cleaning up (kill -9, a crash), and an `atexit` hook for an exit that skips `close`.
SIGTERM and Ctrl-C unwind through the session's `close`. Requests go through `OpenAIHTTPProvider` (plain httpx).

Native tool calls through llama.cpp are unreliable, so the session uses the json protocol with constrained
decoding: the plan's options carry `response_format={"type": "json_object", "schema": ...}` (see session.py).
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import IO, TYPE_CHECKING, Any

from cli_agent.config import LocalSettings
from cli_agent.errors import ProviderError, RunTimeoutError, UsageError
from cli_agent.local_model import ensure_model, install_command, needs_setup, resolve_model, runtime_version
from cli_agent.providers.base import Preferences, ProviderReply, ProviderRequest
from cli_agent.providers.openai_http import OpenAIHTTPProvider, import_httpx
from cli_agent.warm_cache import CACHE_BYTES, WarmCache

if TYPE_CHECKING:
    from pathlib import Path

    from cli_agent.config import Settings

__all__ = ["CONSTRAINED_ANSWER", "KEY_VARIABLES", "LOCAL_MODEL", "LlamaServer", "LocalProvider", "default_to_local"]

LOCAL_MODEL = "local"
# A configured key for any of these means the user has a hosted model in mind: no silent switch to local then.
KEY_VARIABLES = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "MISTRAL_API_KEY",
                 "GROQ_API_KEY", "OPENROUTER_API_KEY", "DEEPSEEK_API_KEY", "XAI_API_KEY", "TOGETHERAI_API_KEY",
                 "COHERE_API_KEY", "AZURE_API_KEY", "FIREWORKS_API_KEY")
# Appended to the system prompt of the local model: its output is grammar-constrained, so it cannot answer in
# plain text as the json protocol's prompt says, and without this it never stops (it keeps calling tools).
CONSTRAINED_ANSWER = """
Your replies are JSON only: plain text is not possible. To answer, or when the task is done, reply with
{"tool": "answer", "parameters": {"text": "<the answer, or what you changed>"}, "terminate": true}
Once a change has succeeded, do not change it again or undo it: answer.
"""
LOAD_TIMEOUT_S = 180.0  # from start to the first answer, on a cold disk
MAX_TOKENS = 2048  # a constrained reply that never closes its JSON still ends
_PLAN_ONLY = ("model", "protocol")  # plan options that describe the request, not wire parameters
_PR_SET_PDEATHSIG = 1


def default_to_local(settings: Settings, env: dict[str, str] | None = None) -> tuple[Settings, str | None]:
    """The settings with `model = "local"` when no model, server or key is configured, and the note saying so."""
    env = dict(os.environ) if env is None else env
    if settings.model or settings.api_base or settings.api_key or any(env.get(k) for k in KEY_VARIABLES):
        return settings, None
    note = (f"no model or API key configured: using the bundled local model ({settings.local.model}); "
            "pass --model to use another")
    return dataclasses.replace(settings, model=LOCAL_MODEL), note


def setup_pending(settings: Settings) -> bool:
    """The settings select the local model (named, or by default) and its file still has to be assembled or checked,
    which takes seconds to a minute behind a progress bar; False when it is ready, or not the local model."""
    settings, _ = default_to_local(settings)
    if settings.model != LOCAL_MODEL or runtime_version() is None:
        return False
    try:
        return needs_setup(resolve_model(settings.local.model))
    except UsageError:  # opening the session says what is wrong
        return False


def _file_key(path: Path) -> str:
    """A user's own .gguf has no pinned sha256: its real path, size and mtime stand in for it."""
    import hashlib

    st = path.stat()
    return hashlib.sha256(f"{path.resolve()}\0{st.st_size}\0{st.st_mtime_ns}".encode()).hexdigest()


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def default_threads() -> int:
    """Half the cores, as llama.cpp does: its threads spin at each step, and on a busy machine two of them on two
    cores ran 10-15 times slower than one (measured with SmolLM2 while tests ran alongside)."""
    return max(1, _cores() // 2)


def default_batch_threads(load: Callable[[], tuple[float, float, float]] | None = None) -> int:
    """Threads for evaluating a prompt (compute-bound, so it scales with cores): the cores this process may use
    that the machine's one-minute load leaves idle, at least one."""
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
    import ctypes

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
    """One `llama_cpp.server` child on 127.0.0.1 at a free port."""

    def __init__(self, model_path: Path, *, threads: int, context_size: int, batch_threads: int | None = None,
                 cache: WarmCache | None = None) -> None:
        self.model_path = model_path
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
    def pid(self) -> int | None:
        return self.process.pid if self.process else None

    def command(self) -> list[str]:
        return [sys.executable, "-m", "llama_cpp.server", "--model", str(self.model_path), "--model_alias",
                LOCAL_MODEL, "--host", "127.0.0.1", "--port", str(self.port), "--n_ctx", str(self.context_size),
                "--n_threads", str(self.threads), "--n_threads_batch", str(self.batch_threads)] + (
                ["--cache", "true", "--cache_type", "disk", "--cache_size", str(CACHE_BYTES)] if self.cache else [])

    def start(self) -> None:
        """Start the child and return at once; `wait_ready` waits for it to answer."""
        if self.process is not None:
            return
        self.port = _free_port()
        self._log = tempfile.TemporaryFile(prefix="cli-agent-llama-")  # noqa: SIM115 (closed in stop)
        self.process = subprocess.Popen(self.command(), stdin=subprocess.DEVNULL, stdout=self._log,
                                        stderr=subprocess.STDOUT, start_new_session=True,
                                        cwd=self.cache.folder if self.cache else None,
                                        preexec_fn=_die_with_parent(), env=os.environ | {"PYTHONUNBUFFERED": "1"})
        atexit.register(self.stop)

    def wait_ready(self, timeout_s: float) -> None:
        """Poll `/v1/models` until it answers; a child that exits, or no answer in time, is an error."""
        if self._ready:
            return
        httpx = import_httpx()  # without httpx's command-line client (click, rich, pygments)
        if self.process is None:
            self.start()
        assert self.process is not None
        deadline = time.monotonic() + timeout_s
        with httpx.Client(trust_env=False, timeout=2.0) as client:
            while True:
                if self.process.poll() is not None:
                    raise ProviderError(f"the local model server exited with code {self.process.returncode} "
                                        f"while loading {self.model_path.name}: {self.log_tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if client.get(f"{self.api_base}/models").status_code == 200:
                        self._ready = True
                        return
                if time.monotonic() >= deadline:
                    raise ProviderError(f"the local model server did not answer within {timeout_s:.0f}s: "
                                        f"{self.log_tail()}")
                time.sleep(0.05)

    def check_alive(self) -> None:
        if self.process is not None and self.process.poll() is not None:
            raise ProviderError(f"the local model server stopped (exit code {self.process.returncode}): "
                                f"{self.log_tail()}")

    def log_tail(self, lines: int = 6) -> str:
        if self._log is None:
            return "no log"
        with contextlib.suppress(OSError, ValueError):
            self._log.seek(0)
            text = self._log.read()[-8000:].decode("utf-8", errors="replace")
            tail = [line.strip() for line in text.splitlines() if line.strip()][-lines:]
            return " | ".join(tail) or "no output"
        return "no log"

    def stop(self, grace_s: float = 1.0) -> None:
        """SIGTERM the child's process group, SIGKILL it after `grace_s`; safe to call more than once."""
        atexit.unregister(self.stop)
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


class LocalProvider:
    """The Provider for `--model local`: verifies the model file, starts the server, and talks OpenAI HTTP to it.
    Native tool calls through llama.cpp are unreliable: it asks for the json protocol, constrained by a schema,
    with the compact prompt (which stays the same across steps, so the server's prompt cache holds) at
    temperature 0."""

    preferences = Preferences(protocol="json", options={"temperature": 0.0}, detail="compact",
                              constrained_json=True)

    def __init__(self, local: LocalSettings | None = None, *, quiet: bool = False) -> None:
        local = local or LocalSettings()
        if runtime_version() is None:
            raise UsageError(f"--model local needs the 'local' extra (llama-cpp-python with its server); install "
                             f"it with: {install_command()} (or pass --model to use a hosted model)")
        self.spec = resolve_model(local.model)
        self.model_path = ensure_model(self.spec, quiet=quiet)
        self.name = f"local {self.spec.name}"
        self.cache = None
        if local.warm_start:
            self.cache = WarmCache.for_model(self.spec.sha256 or _file_key(self.model_path), runtime_version() or "")
            self.cache.check()
        self.server = LlamaServer(self.model_path, threads=local.threads or default_threads(),
                                  context_size=local.context_size,
                                  batch_threads=local.threads or default_batch_threads(), cache=self.cache)
        self.server.start()
        self._http = OpenAIHTTPProvider(f"openai/{LOCAL_MODEL}", api_base=self.server.api_base,
                                        context_window=local.context_size)

    def supports_native_tools(self) -> bool:
        return False

    def context_window(self) -> int | None:
        return self._http.context_window()

    def request_body(self, request: ProviderRequest) -> dict[str, Any]:
        return self._http.request_body(self._wire(request))

    def _wire(self, request: ProviderRequest) -> ProviderRequest:
        """The request as the server takes it. Without native tools (the json protocol, whose text is never shown
        as it streams) it is not streamed: llama.cpp's server reports token usage only in a whole reply, and
        token budgets need it."""
        options = {k: v for k, v in request.options.items() if k not in _PLAN_ONLY}
        options.setdefault("max_tokens", MAX_TOKENS)
        return replace(request, options=options, stream=request.stream and request.tools is not None)

    def stream(self, request: ProviderRequest) -> Iterator[str | ProviderReply]:
        started = time.monotonic()
        budget = LOAD_TIMEOUT_S if request.timeout_s is None else min(LOAD_TIMEOUT_S, request.timeout_s)
        try:
            self.server.wait_ready(budget)
        except ProviderError as exc:
            loading = self.server.process is not None and self.server.process.poll() is None
            if loading and budget == request.timeout_s:  # the run's budget ran out, not the load time
                raise RunTimeoutError(f"the run's time budget ran out ({budget:g}s) while the local model "
                                      "was loading") from exc
            raise
        self.server.check_alive()
        left = None if request.timeout_s is None else max(0.0, request.timeout_s - (time.monotonic() - started))
        try:
            yield from self._http.stream(replace(self._wire(request), timeout_s=left))
        except ProviderError:
            self.server.check_alive()  # a dead server says so instead of a retryable connection error
            fault = self.cache.fault(self.server.log_tail(40)) if self.cache else None
            if fault is not None:
                raise fault from None
            raise

    def close(self) -> None:
        try:
            self._http.close()
        finally:
            self.server.stop()
